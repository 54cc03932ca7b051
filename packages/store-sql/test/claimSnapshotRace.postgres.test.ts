/**
 * A claim on Postgres racing a job's creation (found by the slow-link fault scenario under load):
 * the claim's statement joins the job's snapshot with the statement's own snapshot, taken before
 * `claim_next_job` runs, while each query inside the function takes a newer one under READ
 * COMMITTED. A job committed in between was claimed without its configuration (`has no stored
 * snapshot`, a 500, the claim rolled back). Made deterministic here: the jobs table is held while
 * the claim's statement starts, and the job is committed, with a snapshot of its own, before it
 * is let go.
 */
import { configHash, type ConfigSnapshot, ownerScope, summarizeSnapshot, systemScope } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres, newUser, newVine, newVineyard, newWorker } from '@trellis/testkit';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { rawConnection, selectRows } from './support/rawSql.js';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

describeWithPostgres('a claim racing the creation of its job on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');
  let opened: Awaited<ReturnType<typeof databases.openStore>>;

  beforeEach(async () => {
    opened = await databases.openStore();
  });
  afterEach(async () => {
    await opened.close();
  });

  it('claims a job committed while its statement ran, with the snapshot committed with it', async () => {
    const { user, vine, worker } = await opened.uow.run(systemScope, async (stores) => {
      const user = await stores.users.create(newUser());
      const vineyard = await stores.vineyards.create(newVineyard(user.id));
      const vine = await stores.vines.create(newVine(user.id, vineyard.id));
      const worker = await stores.workers.create(newWorker(user.id));
      return { user, vine, worker };
    });
    const snapshot: ConfigSnapshot = {
      vine: { id: vine.id, name: vine.name, project_name: vine.project_name, vineyard_id: vine.vineyard_id },
      source: { type: 'inline', files: { 'main.tf': '# committed while the claim ran\n' } },
      variables: {},
      engine: null,
      cloud_identity_id: null,
    };
    // A claim with nothing to take first: the connection knows the jobs row type from then on,
    // as a server's connections do, so the next claim's statement starts without touching jobs.
    const claim = () =>
      opened.uow.run(ownerScope(user.id), (stores) =>
        stores.jobs.claimNext({ id: worker.id, owner_id: user.id }, new Date().toISOString()),
      );
    expect(await claim()).toBeNull();
    const raw = rawConnection(opened.url);
    try {
      const creation = await raw.transaction();
      // Held: the claim's function waits at its first query of jobs, after its statement began.
      await creation.raw('LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE');
      const claiming = claim();
      for (;;) {
        const waiting = await selectRows(
          raw,
          "SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'jobs' AND NOT l.granted",
        );
        if (waiting.length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const id = crypto.randomUUID();
      const hash = configHash(snapshot);
      await creation('config_snapshots').insert({
        owner_id: user.id,
        config_hash: hash,
        snapshot: JSON.stringify(snapshot),
      });
      await creation('jobs').insert({
        id,
        owner_id: user.id,
        job_type: 'PLAN',
        status: 'QUEUED',
        config_snapshot: JSON.stringify(summarizeSnapshot(snapshot)),
        config_hash: hash,
        vine_id: vine.id,
        vineyard_id: vine.vineyard_id,
        execution_metadata: '{}',
        created_at: new Date().toISOString(),
      });
      await creation.commit();
      const claimed = await claiming;
      expect(claimed?.job.id).toBe(id);
      expect(claimed?.job.config_snapshot).toEqual(snapshot);
      expect(claimed?.vine).toEqual({ before: vine.status, after: expect.any(String) });
    } finally {
      await raw.destroy();
    }
  });
});
