import { type Clock, RateLimitedError, type RateLimitStore } from '@trellis/core';
import type { Request } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';

export interface FailureLimit {
  /** Failures a client may have in a window before it is refused. */
  limit: number;
  windowSeconds: number;
}

/**
 * The client a limit counts against: its address as express sees it (`trust proxy` decides
 * whether a forwarded one is believed), IPv6 clients by their /56, as express-rate-limit does.
 */
export function clientKey(req: Request): string {
  return ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown');
}

/**
 * Counts a client's failed attempts at something guessable (a bootstrap token, worker
 * credentials) and refuses it with `429` once it has `limit` failures in the window. Successes
 * cost nothing; only the check reads the store. Counts live in a `RateLimitStore`, shared by the
 * replicas when that store is the database.
 */
export class FailureLimiter {
  constructor(
    /** Prefix of the store's keys, e.g. `bootstrap`. */
    private readonly name: string,
    private readonly settings: FailureLimit,
    private readonly store: RateLimitStore,
    private readonly clock: Clock,
  ) {}

  /** Throws `RateLimitedError` (with the seconds until the window ends) when `client` is over the limit. */
  async refuseIfBlocked(client: string): Promise<void> {
    const now = this.clock.now();
    const count = await this.store.get(this.key(client), now);
    if (count && count.hits >= this.settings.limit) {
      throw new RateLimitedError(
        'too many failed attempts from this address; retry later',
        Math.max(1, Math.ceil((count.resetsAt.getTime() - now.getTime()) / 1000)),
      );
    }
  }

  async recordFailure(client: string): Promise<void> {
    await this.store.hit(this.key(client), this.clock.now(), this.settings.windowSeconds);
  }

  private key(client: string): string {
    return `${this.name}:${client}`;
  }
}
