import { CredentialCache } from '../auth/CredentialCache.js';
import type { ApiToken, User } from '../domain/records.js';
import type { Clock } from '../ports/Clock.js';
import type { EventBus } from '../ports/EventBus.js';
import type { Membership } from '../ports/OrgStore.js';
import { announce } from '../usecases/CoreDeps.js';

/** What an API token's authentication read: the token, its creator and the creator's memberships. */
export interface VerifiedApiToken {
  record: ApiToken;
  user: User;
  memberships: Membership[];
}

/**
 * API tokens that authenticated a moment ago, by their SHA-256 (never the token), so the stock
 * CLI's polls and a CI job's calls need no database read each. The token's expiry and revocation
 * are checked again on every use. Any change to what a token authenticates as (a token revoked,
 * a membership added, changed or removed, an organization created or deleted) drops every entry,
 * on this replica and, through the `api_credentials_changed` event, on the others: such changes
 * are rare, and a person's memberships reach every token they made.
 */
export class ApiTokenCache {
  private readonly cache: CredentialCache<VerifiedApiToken>;

  constructor(clock: Clock, ttlSeconds: number, events: EventBus, maxEntries = 10_000) {
    this.cache = new CredentialCache(clock, ttlSeconds, maxEntries);
    events.subscribe((event) => {
      if (event.type === 'api_credentials_changed') this.cache.forgetAll();
    });
  }

  lookup(tokenHash: string): VerifiedApiToken | null {
    return this.cache.get(tokenHash);
  }

  /** See `CredentialCache.ticket`. */
  ticket(): number {
    return this.cache.ticket();
  }

  remember(verified: VerifiedApiToken, ticket: number): void {
    this.cache.remember(verified.record.token_hash, verified, ticket);
  }

  /** The last use recorded for a token held, so it is written again a minute later, not at once. */
  used(tokenHash: string, lastUsedAt: string): void {
    const held = this.cache.get(tokenHash);
    if (held) this.cache.replace(tokenHash, { ...held, record: { ...held.record, last_used_at: lastUsedAt } });
  }

  /**
   * Drops every entry here, now: a revocation needs no event's delivery to take effect on the
   * replica that made it (the announcement drops them again, here and on the others).
   */
  forgetAll(): void {
    this.cache.forgetAll();
  }

  get size(): number {
    return this.cache.size;
  }
}

/**
 * Tells every replica that what API tokens of `ownerId` (an organization or a person)
 * authenticate as changed. Call after the change committed.
 */
export function announceApiCredentialsChanged(events: EventBus, ownerId: string): Promise<void> {
  return announce(events, { type: 'api_credentials_changed', owner_id: ownerId });
}
