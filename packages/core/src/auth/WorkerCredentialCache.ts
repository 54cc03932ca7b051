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
 * replica directly and on the others through the `worker_credentials_changed` event.
 */
export class WorkerCredentialCache {
  private readonly entries = new Map<string, CachedCredentials>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlSeconds: number,
    events: EventBus,
    /** Above this many entries, expired ones are swept before adding (workers are few). */
    private readonly sweepAbove = 10_000,
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
    return tokenMatchesHash(token, entry.tokenHash) ? entry.actor : null;
  }

  remember(actor: WorkerActor, tokenHash: string): void {
    if (this.ttlSeconds <= 0) return;
    const now = this.clock.now().getTime();
    if (this.entries.size >= this.sweepAbove) {
      for (const [id, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(id);
    }
    this.entries.set(actor.workerId, { tokenHash, actor, expiresAt: now + this.ttlSeconds * 1000 });
  }

  forget(workerId: string): void {
    this.entries.delete(workerId);
  }

  get size(): number {
    return this.entries.size;
  }
}
