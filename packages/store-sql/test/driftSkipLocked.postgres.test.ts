/**
 * Due drift checks are taken `FOR UPDATE SKIP LOCKED` (issue 14): while one replica's unit of
 * work holds the vines it took, another replica's pass takes the other due vines at once, never
 * those, and does not wait for the first.
 */
import { systemScope, type Vine } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres } from '@trellis/testkit';
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

describeWithPostgres('due drift checks on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');

  it('a second pass skips the vines a first, still open, pass holds', async () => {
    const { store } = await databases.openStore();
    const past = new Date(Date.now() - 60_000).toISOString();
    const created = new Date().toISOString();
    const owner = { id: randomUUID(), email: `${randomUUID()}@example.test`, name: 'drift', created_at: created };
    const vines: Vine[] = [];
    await store.uow.run(systemScope, async (stores) => {
      await stores.users.create(owner);
      const vineyard = await stores.vineyards.create({
        id: randomUUID(),
        owner_id: owner.id,
        name: 'drift',
        created_at: created,
      });
      for (let i = 0; i < 4; i += 1) {
        vines.push(
          await stores.vines.create({
            id: randomUUID(),
            owner_id: owner.id,
            vineyard_id: vineyard.id,
            name: `vine-${i}`,
            project_name: `project-${i}`,
            cloud_identity_id: null,
            source: { type: 'inline', files: { 'main.tf': '' } },
            variables: {},
            engine: { name: 'tofu', version: null },
            status: 'DEPLOYED',
            status_message: null,
            drift_detection: { interval_minutes: 60 },
            next_drift_check_at: new Date(Date.parse(past) + i).toISOString(),
            drift: null,
            triggers: { after: [] },
            approval: null,
            created_at: created,
            updated_at: created,
          }),
        );
      }
    });
    const now = new Date().toISOString();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let first: Vine[] = [];
    let tookFirst!: () => void;
    const firstTook = new Promise<void>((resolve) => {
      tookFirst = resolve;
    });
    const firstPass = store.uow.run(systemScope, async (stores) => {
      first = await stores.vines.takeDueDriftChecks(now, 2);
      tookFirst();
      await held;
    });
    await firstTook;
    const second = await store.uow.run(systemScope, (stores) => stores.vines.takeDueDriftChecks(now, 10));
    release();
    await firstPass;
    expect(first.map((vine) => vine.id)).toEqual([vines[0]?.id, vines[1]?.id]);
    expect(second.map((vine) => vine.id)).toEqual([vines[2]?.id, vines[3]?.id]);
    await store.close();
  });
});
