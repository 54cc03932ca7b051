import type { EventBus, TrellisEvent } from '@trellis/core';

/**
 * Resolves true when a matching event arrives, false when `timeoutMs` passes or `signal` aborts.
 * Subscribe before reading state and re-read after waking: then nothing is ever missed.
 */
export function waitForEvent(
  events: EventBus,
  matches: (event: TrellisEvent) => boolean,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const finish = (result: boolean) => {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const onAbort = () => finish(false);
    const unsubscribe = events.subscribe((event) => {
      if (matches(event)) finish(true);
    });
    const timer = setTimeout(() => finish(false), Math.max(0, timeoutMs));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A latch that remembers whether a matching event arrived since it was last taken, for loops
 * that must not miss an event arriving while they read.
 */
export class EventLatch {
  private dirty = false;
  private wake: (() => void) | null = null;
  private readonly unsubscribe: () => void;

  constructor(events: EventBus, matches: (event: TrellisEvent) => boolean) {
    this.unsubscribe = events.subscribe((event) => {
      if (!matches(event)) return;
      this.dirty = true;
      this.wake?.();
    });
  }

  /** Waits until an event arrived since the last call, or `timeoutMs` passed. */
  async next(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.dirty || signal?.aborted) {
      this.dirty = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done, { once: true });
      this.wake = done;
    });
    this.dirty = false;
  }

  close(): void {
    this.unsubscribe();
    this.wake?.();
  }
}
