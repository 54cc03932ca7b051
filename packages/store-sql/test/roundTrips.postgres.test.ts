/**
 * Round trips on Postgres (issue 17): an owner-scoped unit of work sends its setup (the
 * `trellis_app` role, the owner and the actor for row-level security) with its BEGIN, and a claim
 * is one statement, vine move and answer included; a unit of work reads and stores a
 * configuration snapshot once, however many of its jobs have it. Counted as the queries the pg driver sends
 * on the store's own connections (not timed: a count does not depend on the machine's load).
 */
import { ownerScope, systemScope } from '@trellis/core';
import {
  checkTestPostgres,
  describeWithPostgres,
  newJob,
  newUser,
  newVine,
  newVineyard,
  newWorker,
} from '@trellis/testkit';
import type { Job } from '@trellis/core';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runTransaction } from '../src/dialects/postgres/pgTransaction.js';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

/** The text of every query a pg client on `database` sends while `work` runs. */
async function queriesSentTo(database: string, work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = prototype.query;
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [config] = args;
    const text = typeof config === 'string' ? config : (config as { text?: string }).text;
    if (this.database === database && text !== undefined) sent.push(text);
    return query.apply(this, args);
  };
  try {
    await work();
  } finally {
    prototype.query = query;
  }
  return sent;
}

describeWithPostgres('round trips on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');
  let opened: Awaited<ReturnType<typeof databases.openStore>>;
  let database: string;

  beforeEach(async () => {
    opened = await databases.openStore();
    database = new URL(opened.url).pathname.slice(1);
  });
  afterEach(async () => {
    await opened.close();
  });

  const seed = () =>
    opened.uow.run(systemScope, async (stores) => {
      const user = await stores.users.create(newUser());
      const vineyard = await stores.vineyards.create(newVineyard(user.id));
      const vine = await stores.vines.create(newVine(user.id, vineyard.id));
      const worker = await stores.workers.create(newWorker(user.id));
      return { user, vineyard, vine, worker };
    });

  it('opens an owner-scoped unit of work, read or write, in the round trip of its BEGIN', async () => {
    const { user, vineyard } = await seed();
    const read = () => opened.uow.read(ownerScope(user.id), (stores) => stores.vineyards.get(user.id, vineyard.id));
    const write = () => opened.uow.run(ownerScope(user.id), (stores) => stores.vineyards.get(user.id, vineyard.id));
    expect(await read()).toEqual(vineyard);

    for (const [unitOfWork, begin] of [
      [read, 'BEGIN TRANSACTION READ ONLY; SELECT set_config('],
      [write, 'BEGIN; SELECT set_config('],
    ] as const) {
      let found: unknown;
      const sent = await queriesSentTo(database, async () => {
        found = await unitOfWork();
      });
      expect(found).toEqual(vineyard);
      expect(sent).toHaveLength(3);
      expect(sent[0]?.startsWith(begin)).toBe(true);
      expect(sent[0]).toContain(`'${user.id}'`);
      expect(sent[2]).toMatch(/^COMMIT/);
    }
  });

  it('fails a unit of work whose setup fails, and leaves its pooled connection usable', async () => {
    // One connection, so the second transaction runs on the one the failed setup left.
    const pool = new pg.Pool({ connectionString: opened.url, max: 1 });
    const connect = () => pool.connect();
    try {
      const failing = runTransaction(connect, { readOnly: false, setup: 'SELECT 1/0' }, (client) =>
        client.query('SELECT 1'),
      );
      await expect(failing).rejects.toThrow(/division by zero/);
      const sent = await queriesSentTo(database, async () => {
        const next = await runTransaction(connect, { readOnly: false, setup: 'SELECT 3' }, (client) =>
          client.query('SELECT 2 AS two'),
        );
        expect(next.rows).toEqual([{ two: 2 }]);
      });
      expect(sent).toEqual(['BEGIN; SELECT 3', 'SELECT 2 AS two', 'COMMIT;']);
      expect(pool.totalCount).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it('claims a job, moves its vine and reads its answer in one statement', async () => {
    const { user, vine, worker, vineyard } = await seed();
    const job = newJob(user.id, vine);
    await opened.uow.run(ownerScope(user.id), (stores) => stores.jobs.create(job));
    let claimed: unknown;
    const sent = await queriesSentTo(database, async () => {
      claimed = await opened.uow.run(ownerScope(user.id), (stores) =>
        stores.jobs.claimNext({ id: worker.id, owner_id: user.id }, new Date().toISOString()),
      );
    });
    expect(claimed).toMatchObject({
      job: { id: job.id, status: 'PROCESSING', vine_status_before: 'NEW' },
      vine: { before: 'NEW', after: 'PLANNING' },
      vineyard,
    });
    expect(sent).toHaveLength(3);
    expect(sent[0]).toContain('set_config(');
    expect(sent[1]).toContain('claim_next_job(');
  });

  it("reads a snapshot once in a unit of work: a job read, ended, and its plan's apply queued", async () => {
    const { user, vine, worker } = await seed();
    const plan = newJob(user.id, vine, { job_type: 'PLAN', status: 'PROCESSING', claimed_by_worker_id: worker.id });
    const base = newJob(user.id, vine);
    const other = newJob(user.id, vine, {
      config_hash: 'b'.repeat(64),
      config_snapshot: { ...base.config_snapshot, variables: { region: { value: 'eu', sensitive: false } } },
    });
    await opened.uow.run(ownerScope(user.id), async (stores) => {
      await stores.jobs.create(plan);
      await stores.jobs.create(other);
    });
    let read: Job[][] = [];
    const sent = await queriesSentTo(database, async () => {
      read = await opened.uow.run(ownerScope(user.id), async (stores) => {
        const current = await stores.jobs.get(user.id, plan.id);
        const ended = await stores.jobs.update(user.id, plan.id, 'PROCESSING', { status: 'SUCCESS' });
        const apply = await stores.jobs.create(
          newJob(user.id, vine, { job_type: 'DEPLOY', plan_job_id: plan.id, config_hash: plan.config_hash }),
        );
        const locked = await stores.jobs.getForUpdate(user.id, other.id);
        const listed = await stores.jobs.list(user.id, { vine_id: vine.id });
        return [[current, ended, apply, locked].map((job) => job as Job), listed];
      });
    });
    const [[current, ended, apply, locked], listed] = read as [Job[], Job[]];
    for (const job of [current, ended, apply]) expect(job?.config_snapshot).toEqual(plan.config_snapshot);
    expect(ended?.status).toBe('SUCCESS');
    expect(locked?.config_snapshot).toEqual(other.config_snapshot);
    expect(listed).toHaveLength(3);
    for (const job of listed) {
      expect(job.config_snapshot).toEqual(job.id === other.id ? other.config_snapshot : plan.config_snapshot);
    }
    // Each snapshot comes with its job's read (joined, and locked: FOR UPDATE OF the job alone);
    // the update, the apply of the same hash and the list neither read nor insert one again.
    const snapshotStatements = sent.filter((text) => text.includes('config_snapshots'));
    expect(snapshotStatements).toHaveLength(2);
    expect(snapshotStatements[0]).toMatch(/left join "config_snapshots"/);
    expect(snapshotStatements[1]).toMatch(/left join "config_snapshots".* for update of "jobs"$/);
  });
});
