/**
 * The claim under real concurrency (DESIGN §3): 8 agents in 8 processes, each with its own
 * connection, claim 2,000 jobs spread over 200 vines of one owner. Every job must be claimed
 * exactly once, no vine may ever have two jobs PROCESSING, and each vine's jobs must be claimed
 * in the order they were queued.
 *
 * "Never two at once" is checked by the database itself: a test-only trigger mirrors every
 * QUEUED→PROCESSING change of a vine's job into `active_vine`, whose primary key is the vine, and
 * removes it when the job leaves PROCESSING, in the same transaction as the status change. A
 * second concurrent claim of a vine therefore fails its INSERT (on Postgres after waiting for
 * the first to commit), which the claimer reports as an error. The same trigger appends to
 * `claim_log`, whose order per vine is the claim order the FIFO check compares.
 */
import { randomUUID } from 'node:crypto';
import { type Job, ownerScope, systemScope, type UnitOfWork, type Vine, type Worker } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres, type TestDialect } from '@trellis/testkit';
import type { Knex } from 'knex';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireFreshBuild, runFixture } from './support/children.js';
import { rawConnection, selectRows } from './support/rawSql.js';
import { useMigratedDatabases } from './support/sqlStores.js';

const JOBS = 2_000;
const VINES = 200;
const AGENTS = 8;

const postgres = await checkTestPostgres();

describe('claim concurrency on SQLite', () => {
  describeClaimConcurrency('sqlite');
});

describeWithPostgres('claim concurrency on Postgres', postgres, () => {
  describeClaimConcurrency('postgres');
});

function describeClaimConcurrency(dialect: TestDialect): void {
  const databases = useMigratedDatabases(dialect);
  let raw: Knex | undefined;

  beforeAll(() => requireFreshBuild());
  afterEach(async () => {
    await raw?.destroy();
    raw = undefined;
  });

  it(`${AGENTS} agent processes claim ${JOBS} jobs of ${VINES} vines: each once, one per vine at a time, FIFO per vine`, async () => {
    const { store, url } = await databases.openStore();
    const { ownerId, workers, jobs } = await seed(store.uow);
    await store.close();
    raw = rawConnection(url);
    await installClaimTracking(raw, dialect);
    await expectTrackingToCatchTwoRunningJobsOfOneVine(raw, jobs);

    const outputs = await Promise.all(workers.map((worker) => runFixture('claimer.mjs', [url, ownerId, worker.id])));
    const reports = outputs.map(
      (output) => JSON.parse(output) as { workerId: string; claims: { job_id: string }[]; errors: string[] },
    );

    expect(reports.flatMap((report) => report.errors)).toEqual([]);
    const claimed = reports.flatMap((report) => report.claims.map((claim) => claim.job_id));
    expect(claimed).toHaveLength(JOBS);
    expect(new Set(claimed).size).toBe(JOBS);
    expect(
      reports.filter((report) => report.claims.length > 0).length,
      'the agents really ran side by side',
    ).toBeGreaterThanOrEqual(AGENTS / 2);

    const statuses = await selectRows<{ status: string; n: number | string }>(
      raw,
      'SELECT status, count(*) AS n FROM jobs GROUP BY status',
    );
    expect(statuses.map((row) => [row.status, Number(row.n)])).toEqual([['SUCCESS', JOBS]]);
    expect(await selectRows(raw, 'SELECT * FROM active_vine')).toEqual([]);

    const log = await selectRows<{ vine_id: string; job_id: string }>(
      raw,
      'SELECT vine_id, job_id FROM claim_log ORDER BY seq',
    );
    expect(log).toHaveLength(JOBS);
    expect(claimOrderByVine(log)).toEqual(creationOrderByVine(jobs));
  }, 180_000);
}

async function seed(uow: UnitOfWork): Promise<{ ownerId: string; workers: Worker[]; jobs: Job[] }> {
  const ownerId = randomUUID();
  const now = new Date().toISOString();
  await uow.run(systemScope, (stores) =>
    stores.users.create({ id: ownerId, email: `${ownerId}@example.test`, name: 'load', created_at: now }),
  );
  return uow.run(ownerScope(ownerId), async (stores) => {
    const vineyard = await stores.vineyards.create({
      id: randomUUID(),
      owner_id: ownerId,
      name: 'load',
      created_at: now,
    });
    const vines: Vine[] = [];
    for (let i = 0; i < VINES; i += 1) {
      vines.push(
        await stores.vines.create({
          id: randomUUID(),
          owner_id: ownerId,
          vineyard_id: vineyard.id,
          name: `vine-${i}`,
          project_name: `project-${i}`,
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
          created_at: now,
          updated_at: now,
        }),
      );
    }
    const workers: Worker[] = [];
    for (let i = 0; i < AGENTS; i += 1) {
      workers.push(
        await stores.workers.create({
          id: randomUUID(),
          owner_id: ownerId,
          name: `agent-${i}`,
          mode: 'self-hosted',
          token_hash: '0'.repeat(64),
          last_heartbeat: now,
          version: '1.0.0',
          metadata: {},
          created_at: now,
          destroyed_at: null,
        }),
      );
    }
    // Every vine gets a job among the first 200, in shuffled order; the rest go to random vines,
    // so vines' queues interleave and have different lengths.
    const vineOrder = [...shuffled(vines), ...Array.from({ length: JOBS - VINES }, () => pick(vines))];
    const jobs: Job[] = [];
    for (const [index, vine] of vineOrder.entries()) {
      jobs.push(
        await stores.jobs.create({
          id: randomUUID(),
          owner_id: ownerId,
          job_type: 'PLAN',
          status: 'QUEUED',
          config_snapshot: { vine: null, source: null, variables: {}, engine: null, cloud_identity_id: null },
          config_hash: index.toString(16).padStart(64, '0'),
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
          created_by: null,
          caused_by: null,
          claimed_policies: null,
          approval: null,
          policy_override: null,
          created_at: now,
          claimed_at: null,
          finished_at: null,
        }),
      );
    }
    return { ownerId, workers, jobs };
  });
}

/** The test-only trigger described at the top of this file. */
async function installClaimTracking(raw: Knex, dialect: TestDialect): Promise<void> {
  if (dialect === 'sqlite') {
    await raw.raw('CREATE TABLE active_vine (vine_id TEXT PRIMARY KEY, job_id TEXT NOT NULL)');
    await raw.raw(
      'CREATE TABLE claim_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, vine_id TEXT NOT NULL, job_id TEXT NOT NULL)',
    );
    await raw.raw(`
      CREATE TRIGGER jobs_claimed AFTER UPDATE OF status ON jobs
      WHEN OLD.status = 'QUEUED' AND NEW.status = 'PROCESSING' AND NEW.vine_id IS NOT NULL
      BEGIN
        INSERT INTO active_vine (vine_id, job_id) VALUES (NEW.vine_id, NEW.id);
        INSERT INTO claim_log (vine_id, job_id) VALUES (NEW.vine_id, NEW.id);
      END`);
    await raw.raw(`
      CREATE TRIGGER jobs_released AFTER UPDATE OF status ON jobs
      WHEN OLD.status = 'PROCESSING' AND NEW.status <> 'PROCESSING' AND NEW.vine_id IS NOT NULL
      BEGIN
        DELETE FROM active_vine WHERE vine_id = NEW.vine_id AND job_id = NEW.id;
      END`);
    return;
  }
  await raw.raw('CREATE TABLE active_vine (vine_id uuid PRIMARY KEY, job_id uuid NOT NULL)');
  await raw.raw('CREATE TABLE claim_log (seq bigserial PRIMARY KEY, vine_id uuid NOT NULL, job_id uuid NOT NULL)');
  // SECURITY DEFINER: the agents' units of work run as trellis_app, which has no rights on
  // these test tables.
  await raw.raw(`
    CREATE FUNCTION track_vine_claims() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
    BEGIN
      IF OLD.status = 'QUEUED' AND NEW.status = 'PROCESSING' THEN
        INSERT INTO active_vine (vine_id, job_id) VALUES (NEW.vine_id, NEW.id);
        INSERT INTO claim_log (vine_id, job_id) VALUES (NEW.vine_id, NEW.id);
      ELSIF OLD.status = 'PROCESSING' AND NEW.status <> 'PROCESSING' THEN
        DELETE FROM active_vine WHERE vine_id = NEW.vine_id AND job_id = NEW.id;
      END IF;
      RETURN NULL;
    END $$`);
  await raw.raw(`
    CREATE TRIGGER jobs_track_vine_claims AFTER UPDATE OF status ON jobs
    FOR EACH ROW WHEN (NEW.vine_id IS NOT NULL) EXECUTE FUNCTION track_vine_claims()`);
}

/** The check must be able to fail: two running jobs of one vine are refused (and rolled back). */
async function expectTrackingToCatchTwoRunningJobsOfOneVine(raw: Knex, jobs: Job[]): Promise<void> {
  const first = jobs[0] as Job;
  const sibling = jobs.find((job) => job.vine_id === first.vine_id && job.id !== first.id) ?? (jobs[1] as Job);
  await expect(
    raw.transaction(async (trx) => {
      await trx('jobs').whereIn('id', [first.id, sibling.id]).update({ status: 'PROCESSING' });
    }),
  ).rejects.toThrow(/unique|duplicate/i);
  expect(await selectRows(raw, "SELECT id FROM jobs WHERE status <> 'QUEUED'")).toEqual([]);
}

function claimOrderByVine(log: { vine_id: string; job_id: string }[]): Map<string, string[]> {
  const order = new Map<string, string[]>();
  for (const { vine_id, job_id } of log) order.set(vine_id, [...(order.get(vine_id) ?? []), job_id]);
  return order;
}

function creationOrderByVine(jobs: Job[]): Map<string, string[]> {
  return claimOrderByVine(jobs.map((job) => ({ vine_id: job.vine_id as string, job_id: job.id })));
}

function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

function pick<T>(items: T[]): T {
  return items[Math.floor(Math.random() * items.length)] as T;
}
