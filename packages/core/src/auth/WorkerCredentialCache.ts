import type { WorkerActor } from '../domain/actors.js';
import type { Clock } from '../ports/Clock.js';
import type { EventBus } from '../ports/EventBus.js';
import { tokenMatchesHash } from './workerToken.js';

interface CachedCredentials {
  tokenHash: string;
  actor: WorkerActor;
  expiresAt: number;
}

/**
 * Worker credentials that authenticated a moment ago, so an agent's steady requests (heartbeats,
 * claims, log chunks) need no database round trip each. Only successes are kept: an unknown id
 * or a wrong token always goes to the database (and to the failure limit). An entry lives
 * `ttlSeconds` at most and is dropped at once when the worker's credentials change, on this
 * replica directly and on the others through the `worker_credentials_changed` event; at most
 * `maxEntries` are held.
 */
export class WorkerCredentialCache {
  /** In least-recently-used order: a hit moves its entry to the end, the first goes when full. */
  private readonly entries = new Map<string, CachedCredentials>();
  /** Counts `forget`s: a lookup that started before one may be stale, so it is not remembered. */
  private forgets = 0;

  constructor(
    private readonly clock: Clock,
    private readonly ttlSeconds: number,
    events: EventBus,
    /** At most this many workers are held; the least recently used goes first. */
    private readonly maxEntries = 10_000,
  ) {
    events.subscribe((event) => {
      if (event.type === 'worker_credentials_changed') this.forget(event.worker_id);
    });
  }

  /** The actor when `token` is the cached, unexpired token of `workerId`; null otherwise. */
  lookup(workerId: string, token: string): WorkerActor | null {
    const entry = this.entries.get(workerId);
    if (!entry) return null;
    if (entry.expiresAt <= this.clock.now().getTime()) {
      this.entries.delete(workerId);
      return null;
    }
    if (!tokenMatchesHash(token, entry.tokenHash)) return null;
    this.entries.delete(workerId);
    this.entries.set(workerId, entry);
    return entry.actor;
  }

  /**
   * Taken before the database read whose result goes to `remember`: if the credentials of any
   * worker change meanwhile (an event may overtake the read), the result is not kept.
   */
  ticket(): number {
    return this.forgets;
  }

  remember(actor: WorkerActor, tokenHash: string, ticket: number): void {
    if (this.ttlSeconds <= 0 || this.maxEntries <= 0 || ticket !== this.forgets) return;
    this.entries.delete(actor.workerId);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    const expiresAt = this.clock.now().getTime() + this.ttlSeconds * 1000;
    this.entries.set(actor.workerId, { tokenHash, actor, expiresAt });
  }

  forget(workerId: string): void {
    this.forgets += 1;
    this.entries.delete(workerId);
  }

  get size(): number {
    return this.entries.size;
  }
}
