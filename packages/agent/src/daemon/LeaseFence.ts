import type { RetryClock } from '@trellis/client';

/**
 * The share of the control plane's lost-job timeout an agent goes without an answered heartbeat
 * before it fences itself: far enough from the timeout that a job it still holds has not been
 * failed as lost yet, so what it starts next would not be running for a job already ended.
 */
export const FENCE_SHARE = 2 / 3;

/** When an agent whose lease was last renewed at `renewedAtMs` fences itself (ms since the epoch). */
export function fenceDeadline(renewedAtMs: number, lostJobTimeoutS: number): number {
  return renewedAtMs + lostJobTimeoutS * 1000 * FENCE_SHARE;
}

export type FenceChange = 'fenced' | 'resumed';

export interface FenceChangeDetails {
  /** How long no heartbeat has been answered (from when the last answered one was sent). */
  silentMs: number;
  lostJobTimeoutS: number;
}

/** What a job asks before each engine command: whether the agent is fenced, and a wait until it is not. */
export interface PhaseGate {
  readonly fenced: boolean;
  /** Resolves at once when the agent is not fenced, else when the fence lifts or `signal` aborts. */
  whileFenced(signal?: AbortSignal): Promise<void>;
}

/**
 * An agent's lease (issue 30): the control plane fails the running jobs of an agent whose
 * heartbeats it has not had for the lost-job timeout, which it tells the agent in every
 * heartbeat's answer. The lease runs from when the last answered heartbeat was sent; past
 * {@link FENCE_SHARE} of the timeout the agent is fenced (it claims nothing and starts no engine
 * command) until a heartbeat is answered again. Unknown timeout (an older control plane) or no
 * heartbeat answered yet: never fenced. Pure but for the clock; `onChange` hears each change.
 */
export class LeaseFence implements PhaseGate {
  private renewedAtMs: number | null = null;
  private lostJobTimeoutS: number | null = null;
  private isFenced = false;
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly clock: Pick<RetryClock, 'now'>,
    private readonly onChange: (change: FenceChange, details: FenceChangeDetails) => void = () => {},
  ) {}

  /** A heartbeat sent at `sentAt` was answered, with the control plane's lost-job timeout (absent from older ones). */
  renew(sentAt: Date, lostJobTimeoutS: number | undefined): FenceChange | null {
    if (lostJobTimeoutS !== undefined && lostJobTimeoutS > 0) this.lostJobTimeoutS = lostJobTimeoutS;
    const at = sentAt.getTime();
    if (this.renewedAtMs === null || at > this.renewedAtMs) this.renewedAtMs = at;
    return this.update();
  }

  /** Milliseconds until the agent fences itself (≤ 0: it is due); null when it never will as things stand. */
  msUntilFence(): number | null {
    if (this.lostJobTimeoutS === null || this.renewedAtMs === null) return null;
    return fenceDeadline(this.renewedAtMs, this.lostJobTimeoutS) - this.clock.now().getTime();
  }

  get fenced(): boolean {
    this.update();
    return this.isFenced;
  }

  /** Decides again at the clock's time; returns the change, if any (each is heard once by `onChange`). */
  update(): FenceChange | null {
    const left = this.msUntilFence();
    const fenced = left !== null && left <= 0;
    if (fenced === this.isFenced) return null;
    this.isFenced = fenced;
    const change: FenceChange = fenced ? 'fenced' : 'resumed';
    this.onChange(change, {
      silentMs: this.clock.now().getTime() - (this.renewedAtMs ?? 0),
      lostJobTimeoutS: this.lostJobTimeoutS ?? 0,
    });
    if (!fenced) {
      for (const wake of [...this.waiters]) wake();
    }
    return change;
  }

  whileFenced(signal?: AbortSignal): Promise<void> {
    if (!this.fenced || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        this.waiters.delete(wake);
        signal?.removeEventListener('abort', wake);
        resolve();
      };
      this.waiters.add(wake);
      signal?.addEventListener('abort', wake, { once: true });
    });
  }
}
