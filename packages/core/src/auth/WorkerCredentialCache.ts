import type { WorkerActor } from '../domain/actors.js';
import type { Clock } from '../ports/Clock.js';
import type { EventBus } from '../ports/EventBus.js';
import { CredentialCache } from './CredentialCache.js';
import { tokenMatchesHash } from './workerToken.js';

/**
 * Worker credentials that authenticated a moment ago, so an agent's steady requests (heartbeats,
 * claims, log chunks) need no database round trip each. Kept by worker id with the token's hash:
 * a wrong token for a cached id is never served. An entry lives `ttlSeconds` at most and is
 * dropped at once when the worker's credentials change, on this replica directly and on the
 * others through the `worker_credentials_changed` event; at most `maxEntries` are held.
 */
export class WorkerCredentialCache {
  private readonly cache: CredentialCache<{ tokenHash: string; actor: WorkerActor }>;

  constructor(clock: Clock, ttlSeconds: number, events: EventBus, maxEntries = 10_000) {
    this.cache = new CredentialCache(clock, ttlSeconds, maxEntries);
    events.subscribe((event) => {
      if (event.type === 'worker_credentials_changed') this.forget(event.worker_id);
    });
  }

  /** The actor when `token` is the cached, unexpired token of `workerId`; null otherwise. */
  lookup(workerId: string, token: string): WorkerActor | null {
    const entry = this.cache.get(workerId);
    return entry && tokenMatchesHash(token, entry.tokenHash) ? entry.actor : null;
  }

  /** See `CredentialCache.ticket`. */
  ticket(): number {
    return this.cache.ticket();
  }

  remember(actor: WorkerActor, tokenHash: string, ticket: number): void {
    this.cache.remember(actor.workerId, { tokenHash, actor }, ticket);
  }

  forget(workerId: string): void {
    this.cache.forget(workerId);
  }

  get size(): number {
    return this.cache.size;
  }
}
