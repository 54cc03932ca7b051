import type { Leadership } from '@trellis/core';
import type { Client } from 'pg';
import type { PostgresEventBus } from './PostgresEventBus.js';

/**
 * Namespace of the leads' advisory locks (the first key of `pg_try_advisory_lock(int, int)`; the
 * second is the hash of the task's id). Apart from the claims' per-vine locks (m003, "trls").
 */
export const LEADERSHIP_LOCK_NAMESPACE = 0x7472_6c74; // "trlt"

/**
 * Global background tasks on Postgres: a replica leads a task while it holds a session advisory
 * lock named after it. The locks are taken on the event bus's connection, which every replica
 * holds anyway (no connection more), and are kept from turn to turn, so one replica runs each
 * global task until it resigns or its connection ends; the server then releases its locks and
 * another replica takes them at its next turn.
 */
export class PostgresLeadership implements Leadership {
  /** The connection the leads below were taken on: a new one (a reconnect) holds none. */
  private heldOn: Client | null = null;
  private readonly held = new Set<string>();

  constructor(private readonly bus: PostgresEventBus) {}

  tryLeadership(taskId: string): Promise<boolean> {
    return this.bus.onConnection(async (client) => {
      if (client !== this.heldOn) {
        this.held.clear();
        this.heldOn = client;
      }
      if (this.held.has(taskId)) {
        // A session lock lasts as long as the session: a live connection still holds it.
        await client.query('SELECT 1');
        return true;
      }
      const result = await client.query<{ led: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS led', [
        LEADERSHIP_LOCK_NAMESPACE,
        taskId,
      ]);
      const led = result.rows[0]?.led === true;
      if (led) this.held.add(taskId);
      return led;
    });
  }

  /** A lost connection took its locks with it: nothing to give up then, and no reconnecting to do it. */
  async resign(): Promise<void> {
    if (this.held.size === 0) return;
    await this.bus.onOpenConnection(async (client) => {
      if (client === this.heldOn) {
        for (const taskId of this.held) {
          await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LEADERSHIP_LOCK_NAMESPACE, taskId]);
        }
      }
      this.held.clear();
    });
  }
}
