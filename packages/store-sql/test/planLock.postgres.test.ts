/**
 * The deploy gate and the plan decisions lock the plan's row (issue 15, `JobStore.getForUpdate`):
 * while one unit of work holds it, a decision on the plan waits, and when it goes on it sees what
 * the first one committed. So a rejection and a DEPLOY of the same plan never both pass.
 */
import { randomUUID } from 'node:crypto';
import { type Job, systemScope } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres } from '@trellis/testkit';
import pg from 'pg';
import { expect, it } from 'vitest';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

/** Polls (no fixed sleep decides the outcome) until a backend of the database waits on a lock. */
async function untilSomeoneWaitsOnALock(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { rows } = await client.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      if ((rows[0] as { n: number }).n > 0) return;
      if (Date.now() > deadline) throw new Error('nobody waited on the lock');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await client.end();
  }
}

describeWithPostgres('the plan lock on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');

  it('a decision waits for the unit of work holding the plan, then sees what it committed', async () => {
    const { store, url } = await databases.openStore();
    const created = new Date().toISOString();
    const owner = { id: randomUUID(), email: `${randomUUID()}@example.test`, name: 'lock', created_at: created };
    const plan = await store.uow.run(systemScope, async (stores) => {
      await stores.users.create(owner);
      const vineyard = await stores.vineyards.create({
        id: randomUUID(),
        owner_id: owner.id,
        name: 'v',
        created_at: created,
      });
      const vine = await stores.vines.create({
        id: randomUUID(),
        owner_id: owner.id,
        vineyard_id: vineyard.id,
        name: 'web',
        project_name: 'web',
        cloud_identity_id: null,
        source: { type: 'inline', files: { 'main.tf': '' } },
        variables: {},
        engine: { name: 'tofu', version: null },
        status: 'NEW',
        status_message: null,
        drift_detection: null,
        next_drift_check_at: null,
        drift: null,
        triggers: { after: [] },
        approval: null,
        created_at: created,
        updated_at: created,
      });
      return stores.jobs.create({
        id: randomUUID(),
        owner_id: owner.id,
        job_type: 'PLAN',
        status: 'SUCCESS',
        config_snapshot: { vine: null, source: null, variables: {}, engine: null, cloud_identity_id: null },
        config_hash: 'hash',
        vine_id: vine.id,
        vineyard_id: vineyard.id,
        cloud_identity_id: null,
        assigned_worker_id: null,
        claimed_by_worker_id: null,
        plan_job_id: null,
        target_worker_id: null,
        execution_metadata: {},
        error_message: null,
        vine_status_before: null,
        trigger: { type: 'manual' },
        created_by: owner.id,
        caused_by: null,
        claimed_policies: null,
        approval: null,
        policy_override: null,
        created_at: created,
        claimed_at: created,
        finished_at: created,
      });
    });

    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const override = { user_id: owner.id, email: owner.email, at: created, reason: 'accepted' };
    const holder = store.uow.run(systemScope, async (stores) => {
      expect(await stores.jobs.getForUpdate(owner.id, plan.id)).toMatchObject({ id: plan.id, approval: null });
      locked();
      await held;
      await stores.jobs.setPolicyOverride(owner.id, plan.id, override);
    });
    await isLocked;
    const rejection = {
      user_id: owner.id,
      email: owner.email,
      at: created,
      decision: 'rejected' as const,
      comment: 'no',
    };
    let decided: Job | null = null;
    const decision = store.uow.run(systemScope, async (stores) => {
      decided = await stores.jobs.setApproval(owner.id, plan.id, rejection);
    });
    await untilSomeoneWaitsOnALock(url);
    release();
    await holder;
    await decision;
    // The decision went on only after the holder committed, and its row carries the holder's change.
    expect(decided).toMatchObject({ approval: rejection, policy_override: override });
    await store.close();
  });
});
