import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Clock } from '@trellis/core';
import { TrellisApiError, TrellisConnectionError } from './errors.js';

/**
 * Time for retry loops: core's {@link Clock} plus a way to wait. Tests inject one that records the
 * delays and advances its own time instead of sleeping.
 */
export interface RetryClock extends Clock {
  /** Resolves true after `ms`, or false as soon as `signal` aborts (at once if it already has). */
  sleep(ms: number, signal?: AbortSignal): Promise<boolean>;
}

/** The real clock. */
export const systemClock: RetryClock = {
  now: () => new Date(),
  async sleep(ms, signal) {
    if (signal?.aborted) return false;
    try {
      await sleepFor(ms, undefined, signal ? { signal } : {});
      return true;
    } catch {
      return false;
    }
  },
};

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** Source of randomness in [0, 1), for tests. */
  random?: () => number;
}

/**
 * Exponential backoff with "equal jitter": each delay is half the exponential step plus a random
 * part of the other half, so clients that lost the server together do not come back in lockstep,
 * yet none retries in a hot loop.
 */
export class Backoff {
  private attempt = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly random: () => number;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 1000;
    this.maxMs = options.maxMs ?? 30_000;
    this.random = options.random ?? Math.random;
  }

  /** The delay before the next attempt; each call doubles the step up to the maximum. */
  next(): number {
    const step = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.attempt, 30));
    this.attempt += 1;
    return Math.round(step / 2 + this.random() * (step / 2));
  }

  get failures(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}

/**
 * An error worth retrying: the server unreachable, overloaded or restarting. A `507` (its storage
 * full) is not: nothing changes until someone frees space, so the caller fails and says so.
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof TrellisConnectionError) return true;
  if (error instanceof TrellisApiError) {
    return (error.status >= 500 && error.status !== 507) || error.status === 429 || error.status === 408;
  }
  return false;
}

export interface RetryOptions extends BackoffOptions {
  clock?: RetryClock;
  /** Stops waiting between attempts; the last error is then thrown. */
  signal?: AbortSignal;
  /** Which errors are worth another attempt; {@link isTransient} by default. */
  retryable?: (error: unknown) => boolean;
  /** Give up (throwing the last error) rather than wait past this long after the first attempt. */
  timeoutMs?: number;
  /** Give up after this many attempts in all. */
  maxAttempts?: number;
  /** A backoff to continue (shared across calls, reset by the caller); a new one by default. */
  backoff?: Backoff;
  /** Told before each wait, e.g. to log it. */
  onRetry?: (error: unknown, delayMs: number, attempt: number) => void;
}

/**
 * Calls `call` until it succeeds, waiting a jittered, exponentially growing delay after each
 * retryable failure. Throws the first error that is not retryable, or the last one once the time
 * or attempts run out or the signal aborts. `call` gets the attempt number (0 first).
 */
export async function retry<T>(call: (attempt: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const clock = options.clock ?? systemClock;
  const retryable = options.retryable ?? isTransient;
  const backoff = options.backoff ?? new Backoff(options);
  const giveUpAt =
    options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : clock.now().getTime() + options.timeoutMs;
  const maxAttempts = options.maxAttempts ?? Number.POSITIVE_INFINITY;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await call(attempt);
    } catch (error) {
      if (options.signal?.aborted || !retryable(error) || attempt + 1 >= maxAttempts) throw error;
      const delay = backoff.next();
      if (clock.now().getTime() + delay > giveUpAt) throw error;
      options.onRetry?.(error, delay, attempt);
      if (!(await clock.sleep(delay, options.signal))) throw error;
    }
  }
}
