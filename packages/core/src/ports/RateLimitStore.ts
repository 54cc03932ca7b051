/** Where a fixed window of a counted key stands. */
export interface RateLimitCount {
  /** Hits counted in the current window. */
  hits: number;
  /** When the current window ends and the count starts again from zero. */
  resetsAt: Date;
}

/**
 * Counters of fixed-window rate limits, keyed by what is limited (e.g. `bootstrap:203.0.113.7`).
 * Replicas that share one store share the counts, so a limit holds for the deployment, not per
 * process. Time is passed in (`at`), so callers keep the clock.
 */
export interface RateLimitStore {
  /**
   * Counts one hit of `key`. A window that ended before `at` is replaced by a new one of
   * `windowSeconds` starting at `at`. Returns the count including this hit.
   */
  hit(key: string, at: Date, windowSeconds: number): Promise<RateLimitCount>;
  /** The current window of `key` at `at`; null when there is none or it has ended. */
  get(key: string, at: Date): Promise<RateLimitCount | null>;
  /** Takes one hit of the current window back (never below zero). */
  undo(key: string, at: Date): Promise<void>;
  /** Forgets `key`. */
  reset(key: string): Promise<void>;
}
