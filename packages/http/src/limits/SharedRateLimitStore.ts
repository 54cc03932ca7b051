import type { Clock, RateLimitStore } from '@trellis/core';
import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';

/**
 * express-rate-limit's counters in a `RateLimitStore`, so a route's limit holds across replicas
 * when that store is the database. One per limiter: `prefix` keeps the routes' counts apart.
 */
export class SharedRateLimitStore implements Store {
  readonly localKeys = false;
  private windowSeconds = 60;

  constructor(
    private readonly store: RateLimitStore,
    private readonly clock: Clock,
    readonly prefix: string,
  ) {}

  init(options: Options): void {
    this.windowSeconds = options.windowMs / 1000;
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const count = await this.store.get(this.prefix + key, this.clock.now());
    return count ? { totalHits: count.hits, resetTime: count.resetsAt } : undefined;
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const count = await this.store.hit(this.prefix + key, this.clock.now(), this.windowSeconds);
    return { totalHits: count.hits, resetTime: count.resetsAt };
  }

  async decrement(key: string): Promise<void> {
    await this.store.undo(this.prefix + key, this.clock.now());
  }

  async resetKey(key: string): Promise<void> {
    await this.store.reset(this.prefix + key);
  }
}
