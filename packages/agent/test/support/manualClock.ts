import type { RetryClock } from '@trellis/client';

/**
 * Time that only moves when the test says so: backoffs, heartbeat intervals and timeouts wait
 * on it, so no test waits for real time.
 */
export class ManualClock implements RetryClock {
  private time = 0;
  private sleepers: Array<{ due: number; wake: (slept: boolean) => void }> = [];
  now(): Date {
    return new Date(this.time);
  }
  sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const sleeper = { due: this.time + ms, wake: resolve };
      this.sleepers.push(sleeper);
      signal?.addEventListener('abort', () => {
        this.sleepers = this.sleepers.filter((other) => other !== sleeper);
        resolve(false);
      });
    });
  }
  advance(ms: number): void {
    this.time += ms;
    const due = this.sleepers.filter((sleeper) => sleeper.due <= this.time);
    this.sleepers = this.sleepers.filter((sleeper) => sleeper.due > this.time);
    for (const sleeper of due) sleeper.wake(true);
  }
}

/** Lets pending promise callbacks run, then moves the clock on by `ms`. */
export async function tick(clock: ManualClock, ms = 1): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  clock.advance(ms);
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}
