import { createHash } from 'node:crypto';
import { type Clock, RateLimitedError, type RateLimitStore, UnauthorizedError } from '@trellis/core';
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

/** How long a verified credential vouches for its (address, credential) pair, and how often that is renewed. */
const VOUCH_SECONDS = 24 * 60 * 60;
const VOUCH_RENEW_MS = 60 * 60 * 1000;
const MAX_REMEMBERED_VOUCHES = 10_000;
/** How long a bearer secret this process verified from an address skips the count there. */
const VERIFIED_MS = 60 * 60 * 1000;

/**
 * Counts a client's failed attempts at something guessable (a bootstrap token, worker
 * credentials) and refuses it with `429` once it has `limit` failures in the window. Successes
 * cost nothing; only the check reads the store. Counts live in a `RateLimitStore`, shared by the
 * replicas when that store is the database.
 *
 * Guessers behind the same address as a real client (one NAT, one proxy) must not lock it out
 * (issue 23): a credential that verified from an address vouches for that (address, credential
 * subject) pair for a day, and a vouched pair is still checked while the address is blocked (a
 * right credential gets through, a wrong one is `429`). Anything else from a blocked address is
 * refused before any lookup. A bearer secret (an API or CLI token) that verified from an address
 * in this process within the hour goes straight to its verification (`limitBearer`): the steady
 * stock CLI costs no read of the count, and keeps working beside a guesser at its address.
 */
export class FailureLimiter {
  /** Pairs this process vouched for lately (so a steady client writes its vouch once an hour). */
  private readonly vouchedAt = new Map<string, number>();
  /** (address, digest of a bearer secret) pairs that verified in this process, and when. */
  private readonly verifiedAt = new Map<string, number>();

  constructor(
    /** Prefix of the store's keys, e.g. `bootstrap`. */
    private readonly name: string,
    private readonly settings: FailureLimit,
    private readonly store: RateLimitStore,
    private readonly clock: Clock,
  ) {}

  /** Throws `RateLimitedError` (with the seconds until the window ends) when `client` is over the limit. */
  async refuseIfBlocked(client: string): Promise<void> {
    const blocked = await this.blocked(client);
    if (blocked) throw blocked;
  }

  /** The refusal `client` gets while it is over the limit; null when it is not. */
  async blocked(client: string): Promise<RateLimitedError | null> {
    const now = this.clock.now();
    const count = await this.store.get(this.key(client), now);
    if (!count || count.hits < this.settings.limit) return null;
    return new RateLimitedError(
      'too many failed attempts from this address; retry later',
      Math.max(1, Math.ceil((count.resetsAt.getTime() - now.getTime()) / 1000)),
    );
  }

  async recordFailure(client: string): Promise<void> {
    await this.store.hit(this.key(client), this.clock.now(), this.settings.windowSeconds);
  }

  /**
   * Records that `subject` (e.g. a worker id) verified from `client`: for a day the pair is let
   * through to verification even while the address is blocked.
   */
  async vouch(client: string, subject: string): Promise<void> {
    const key = this.vouchKey(client, subject);
    const now = this.clock.now();
    const last = this.vouchedAt.get(key);
    if (last !== undefined && now.getTime() - last < VOUCH_RENEW_MS) return;
    // A new window from now: the vouch lasts a day past the latest renewal.
    await this.store.reset(key);
    await this.store.hit(key, now, VOUCH_SECONDS);
    this.vouchedAt.delete(key);
    if (this.vouchedAt.size >= MAX_REMEMBERED_VOUCHES)
      this.vouchedAt.delete(this.vouchedAt.keys().next().value as string);
    this.vouchedAt.set(key, now.getTime());
  }

  /**
   * Verifies a bearer secret (`verify`) under the limit: a blocked address is refused first, unless
   * this secret verified from it in this process within the hour (a guesser never holds one, so its
   * attempts are still counted and refused); a refusal of the secret (`UnauthorizedError`) counts
   * as a failure and forgets it. The secret is kept only as a digest, in memory.
   */
  async limitBearer<T>(client: string, secret: string | null, verify: () => Promise<T>): Promise<T> {
    const key = secret === null ? null : `${client}\n${createHash('sha256').update(secret).digest('base64url')}`;
    const now = this.clock.now().getTime();
    const verified = key === null ? undefined : this.verifiedAt.get(key);
    if (verified === undefined || now - verified >= VERIFIED_MS) await this.refuseIfBlocked(client);
    let result: T;
    try {
      result = await verify();
    } catch (error) {
      if (error instanceof UnauthorizedError) {
        if (key !== null) this.verifiedAt.delete(key);
        await this.recordFailure(client);
      }
      throw error;
    }
    if (key !== null && (verified === undefined || now - verified >= VERIFIED_MS)) {
      this.verifiedAt.delete(key);
      if (this.verifiedAt.size >= MAX_REMEMBERED_VOUCHES)
        this.verifiedAt.delete(this.verifiedAt.keys().next().value as string);
      this.verifiedAt.set(key, now);
    }
    return result;
  }

  /** Whether `subject` verified from `client` within the last day. */
  async vouched(client: string, subject: string): Promise<boolean> {
    return (await this.store.get(this.vouchKey(client, subject), this.clock.now())) !== null;
  }

  private key(client: string): string {
    return `${this.name}:${client}`;
  }

  private vouchKey(client: string, subject: string): string {
    return `${this.name}-vouched:${client}:${subject}`;
  }
}
