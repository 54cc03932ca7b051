import { RateLimitedError } from '@trellis/core';

export interface LongPollLimits {
  /** Claim long polls one worker may have waiting at once. */
  perWorker: number;
  /** Claim long polls this server holds open at once, all workers together. */
  total: number;
}

/**
 * The claim long polls this server holds open. Each one holds a connection and wakes on every
 * job event of its owner, so a worker (or a stolen token) gets a few, and the server a bounded
 * number; past either, a claim with `wait` is refused with `429 too_many_long_polls`.
 */
export class ClaimLongPolls {
  private readonly byWorker = new Map<string, number>();
  private open = 0;

  constructor(private readonly limits: LongPollLimits) {}

  /** Takes a slot for `workerId`; call the returned function once the poll ends. */
  acquire(workerId: string): () => void {
    const mine = this.byWorker.get(workerId) ?? 0;
    if (mine >= this.limits.perWorker) {
      throw new RateLimitedError(
        `this worker already has ${mine} claim long polls waiting (at most ${this.limits.perWorker})`,
        1,
        'too_many_long_polls',
      );
    }
    if (this.open >= this.limits.total) {
      throw new RateLimitedError(
        `the server holds its maximum of ${this.limits.total} claim long polls`,
        1,
        'too_many_long_polls',
      );
    }
    this.byWorker.set(workerId, mine + 1);
    this.open += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open -= 1;
      const left = (this.byWorker.get(workerId) ?? 1) - 1;
      if (left > 0) this.byWorker.set(workerId, left);
      else this.byWorker.delete(workerId);
    };
  }

  /** Long polls open now: of `workerId`, or all of them. */
  count(workerId?: string): number {
    return workerId === undefined ? this.open : (this.byWorker.get(workerId) ?? 0);
  }
}
