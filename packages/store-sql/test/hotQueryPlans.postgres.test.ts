/**
 * Flat costs with size (issue 17): on a database big enough for the planner to prefer indexes, no
 * hot query reads a large table from end to end. The statements are the ones the stores really
 * send: every statement of each store call is captured at the driver, then replayed in a
 * rolled-back transaction with `auto_explain` logging the plan of each statement, the queries
 * inside `claim_next_job` included, whatever that function's body is today.
 */
import { randomUUID } from 'node:crypto';
import { memberScope, type OwnerIds, ownerScope, type Scope, type Stores, systemScope } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres } from '@trellis/testkit';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SqlStore } from '../src/index.js';
import { rawConnection } from './support/rawSql.js';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

const VINES = 3_000;
const JOBS_PER_VINE = 10;
const LOGGED_JOBS = 10_000;
const CHUNKS_PER_JOB = 10;
const FEEDBACK_ROWS = 20_000;
/** Tables that grow with use: a sequential scan of one of them is a cost that grows with it. */
const LARGE_TABLES = ['jobs', 'log_chunks', 'vines', 'outbox'];
const SEEDED_AT = Date.parse('2026-01-01T00:00:00.000Z');

interface Statement {
  text: string;
  values: unknown[];
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

interface LoggedPlan {
  query: string;
  plan: PlanNode;
}

/** Statements sent through any pg client while `work` runs (knex uses pg's Client.query). */
async function capture(work: () => Promise<unknown>): Promise<Statement[]> {
  const statements: Statement[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first, second] = args;
    if (typeof first === 'string') statements.push({ text: first, values: Array.isArray(second) ? second : [] });
    else if (first && typeof first === 'object' && 'text' in first) {
      const config = first as { text: string; values?: unknown[] };
      statements.push({ text: config.text, values: config.values ?? [] });
    }
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return statements;
}

const TRANSACTION_CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i;

/** The plan of every statement (and nested statement) of `statements`, run and rolled back. */
async function plansOf(url: string, statements: Statement[]): Promise<LoggedPlan[]> {
  const client = new pg.Client({ connectionString: url });
  const plans: LoggedPlan[] = [];
  client.on('notice', (notice) => {
    const text = notice.message ?? '';
    const start = text.indexOf('{');
    if (!text.includes('plan:') || start < 0) return;
    const logged = JSON.parse(text.slice(start)) as { 'Query Text': string; Plan: PlanNode };
    plans.push({ query: logged['Query Text'], plan: logged.Plan });
  });
  await client.connect();
  try {
    await client.query(`LOAD 'auto_explain'`);
    await client.query('SET auto_explain.log_min_duration = 0');
    await client.query('SET auto_explain.log_nested_statements = on');
    await client.query(`SET auto_explain.log_format = 'json'`);
    await client.query('SET client_min_messages = log');
    await client.query('BEGIN');
    for (const statement of statements) {
      if (TRANSACTION_CONTROL.test(statement.text)) continue;
      await client.query(statement.text, statement.values);
    }
    await client.query('ROLLBACK');
  } finally {
    await client.end();
  }
  return plans;
}

function seqScansOfLargeTables(node: PlanNode): string[] {
  const here =
    node['Node Type'] === 'Seq Scan' && LARGE_TABLES.includes(node['Relation Name'] ?? '')
      ? [node['Relation Name']]
      : [];
  return [...(here as string[]), ...(node.Plans ?? []).flatMap(seqScansOfLargeTables)];
}

describeWithPostgres('hot query plans on a large Postgres database', postgres, () => {
  const databases = useMigratedDatabases('postgres');
  let store: SqlStore;
  let url: string;
  const ownerId = randomUUID();
  const orgId = randomUUID();
  const workerId = randomUUID();
  let vineId = '';
  let vineName = '';
  let vineyardId = '';
  let loggedJobId = '';
  let middleChunkId = 0;

  beforeAll(async () => {
    ({ store, url } = await databases.openStore());
    const raw = rawConnection(url);
    try {
      await seed(raw);
      await raw.raw('ANALYZE');
      const [vine] = (await raw.raw('SELECT id, name, vineyard_id FROM vines ORDER BY seq LIMIT 1 OFFSET 7')).rows;
      vineId = vine.id;
      vineName = vine.name;
      vineyardId = vine.vineyard_id;
      const [chunk] = (
        await raw.raw('SELECT job_id, id FROM log_chunks ORDER BY id LIMIT 1 OFFSET ?', [LOGGED_JOBS * 5 + 3])
      ).rows;
      loggedJobId = chunk.job_id;
      middleChunkId = Number(chunk.id);
    } finally {
      await raw.destroy();
    }
  }, 300_000);

  afterAll(async () => {
    await store?.close();
  });

  async function seed(raw: ReturnType<typeof rawConnection>): Promise<void> {
    const at = new Date(SEEDED_AT).toISOString();
    await raw('users').insert({ id: ownerId, email: `${ownerId}@example.test`, name: 'scale', created_at: at });
    await raw('orgs').insert({ id: orgId, name: `org-${orgId}`, created_at: at });
    const [vineyard] = await raw('vineyards')
      .insert({ id: randomUUID(), owner_id: ownerId, name: 'scale', created_at: at })
      .returning('id');
    await raw('workers').insert({
      id: workerId,
      owner_id: ownerId,
      name: 'scale-agent',
      mode: 'self-hosted',
      token_hash: 'x',
      metadata: '{}',
      last_heartbeat: at,
      created_at: at,
    });
    await raw('config_snapshots').insert([
      { owner_id: ownerId, config_hash: 'scale', snapshot: '{}' },
      { owner_id: orgId, config_hash: 'scale', snapshot: '{}' },
    ]);
    // Every tenth vine is the organization's; every third checks for drift, a few are due.
    await raw.raw(
      `INSERT INTO vines (id, owner_id, vineyard_id, name, project_name, source, variables, engine, status,
                          created_at, updated_at, drift_interval_minutes, next_drift_check_at)
       SELECT gen_random_uuid(), CASE WHEN n % 10 = 5 THEN ?::uuid ELSE ?::uuid END, ?, 'vine-' || n, 'project-' || n, '{"type":"inline","files":{}}', '{}',
              '{"name":"tofu","version":null}', 'DEPLOYED', ?::timestamptz + n * interval '1 second',
              ?::timestamptz + n * interval '1 second',
              CASE WHEN n % 3 = 0 THEN 60 END,
              CASE WHEN n % 3 = 0 THEN ?::timestamptz + (CASE WHEN n % 300 = 0 THEN -1 ELSE 1 END) * interval '1 day' END
       FROM generate_series(1, ?) AS n`,
      [orgId, ownerId, vineyard.id, at, at, at, VINES],
    );
    // Ten jobs per vine, oldest first: finished ones, then on every third vine a running job, and on
    // every other vine a queued one.
    await raw.raw(
      `INSERT INTO jobs (id, owner_id, job_type, status, config_snapshot, config_hash, vine_id, vineyard_id,
                         claimed_by_worker_id, execution_metadata, created_at, claimed_at, finished_at, log_bytes)
       SELECT gen_random_uuid(), v.owner_id, 'PLAN', s.status, '{}', 'scale', v.id, v.vineyard_id,
              CASE WHEN s.status <> 'QUEUED' THEN ?::uuid END, '{}', v.created_at + k * interval '1 minute',
              CASE WHEN s.status <> 'QUEUED' THEN v.created_at + k * interval '1 minute' END,
              CASE WHEN s.status IN ('SUCCESS', 'FAILED', 'CANCELLED') THEN v.created_at + k * interval '1 minute' END,
              CASE WHEN s.status IN ('SUCCESS', 'FAILED', 'CANCELLED') THEN 100 ELSE 0 END
       FROM vines v
       CROSS JOIN generate_series(0, ? - 1) AS k
       CROSS JOIN LATERAL (SELECT CASE
         WHEN k = ? - 1 AND v.seq % 2 = 0 THEN 'QUEUED'
         WHEN k = ? - 2 AND v.seq % 3 = 0 THEN 'PROCESSING'
         WHEN k % 4 = 3 THEN 'FAILED'
         WHEN k % 5 = 1 THEN 'CANCELLED'
         ELSE 'SUCCESS' END AS status) AS s
       ORDER BY v.seq, k`,
      [workerId, JOBS_PER_VINE, JOBS_PER_VINE, JOBS_PER_VINE],
    );
    await raw.raw(
      `INSERT INTO log_chunks (job_id, owner_id, log_chunk, stream_type, created_at)
       SELECT j.id, j.owner_id, 'line ' || c || E'\\n', 'stdout', j.created_at
       FROM (SELECT id, owner_id, created_at, seq FROM jobs ORDER BY seq LIMIT ?) AS j
       CROSS JOIN generate_series(1, ?) AS c
       ORDER BY j.seq, c`,
      [LOGGED_JOBS, CHUNKS_PER_JOB],
    );
    // Git provider feedback: delivered long ago, a few still pending.
    await raw.raw(
      `INSERT INTO outbox (id, owner_id, kind, job_id, vine_id, provider, subject, payload, status, attempts,
                           created_at, next_attempt_at, finished_at)
       SELECT gen_random_uuid(), j.owner_id, 'vcs_feedback', j.id, j.vine_id, 'github', 'commit:' || j.seq, '{}',
              CASE WHEN j.seq % 1000 = 0 THEN 'pending' ELSE 'delivered' END, '0', j.created_at, j.created_at,
              CASE WHEN j.seq % 1000 = 0 THEN NULL ELSE j.created_at END
       FROM jobs j ORDER BY j.seq LIMIT ?`,
      [FEEDBACK_ROWS],
    );
  }

  async function statementsOf(scope: Scope, call: (stores: Stores) => Promise<unknown>): Promise<Statement[]> {
    const statements = await capture(() => store.uow.run(scope, call));
    expect(statements.length).toBeGreaterThan(0);
    return statements;
  }

  const now = () => new Date(SEEDED_AT).toISOString();
  /** After every seeded job: the heartbeat asks for what was cancelled since the previous one. */
  const lastHeartbeat = () => new Date(SEEDED_AT + 365 * 86_400_000).toISOString();
  const owners = (): OwnerIds => ownerId;
  const page = { limit: 50 };

  const HOT: Array<[string, () => { scope: Scope; call: (stores: Stores) => Promise<unknown> }]> = [
    [
      'claim',
      () => ({
        scope: ownerScope(ownerId),
        call: (s) => s.jobs.claimNext({ id: workerId, owner_id: ownerId }, now()),
      }),
    ],
    ['job list, first page', () => ({ scope: ownerScope(ownerId), call: (s) => s.jobs.page(owners(), page) })],
    [
      'job list, a later page',
      () => ({
        scope: ownerScope(ownerId),
        call: async (s) => {
          const first = await s.jobs.page(owners(), page);
          if (!first.next) throw new Error('the first page of jobs has no next page');
          return s.jobs.page(owners(), { ...page, after: first.next });
        },
      }),
    ],
    [
      'job list of an owner and an organization',
      () => ({ scope: memberScope(ownerId, [orgId]), call: (s) => s.jobs.page([ownerId, orgId], page) }),
    ],
    [
      'job list of a vine',
      () => ({ scope: ownerScope(ownerId), call: (s) => s.jobs.page(owners(), page, { vine_id: vineId }) }),
    ],
    [
      'job list of a vineyard',
      () => ({ scope: ownerScope(ownerId), call: (s) => s.jobs.page(owners(), page, { vineyard_id: vineyardId }) }),
    ],
    [
      'job list by status (queued)',
      () => ({ scope: ownerScope(ownerId), call: (s) => s.jobs.page(owners(), page, { status: 'QUEUED' }) }),
    ],
    [
      'job list by status (failed)',
      () => ({ scope: ownerScope(ownerId), call: (s) => s.jobs.page(owners(), page, { status: 'FAILED' }) }),
    ],
    [
      'log page, from the start',
      () => ({ scope: ownerScope(ownerId), call: (s) => s.logs.list(ownerId, loggedJobId, 0, 100) }),
    ],
    [
      'log page, after a chunk',
      () => ({ scope: ownerScope(ownerId), call: (s) => s.logs.list(ownerId, loggedJobId, middleChunkId, 100) }),
    ],
    [
      'log append',
      () => ({
        scope: ownerScope(ownerId),
        call: (s) => s.logs.append(ownerId, loggedJobId, 'more\n', 'stdout', now()),
      }),
    ],
    [
      'vine page',
      () => ({
        scope: ownerScope(ownerId),
        call: async (s) => {
          await s.vines.findByName(ownerId, vineName);
          await s.vines.get(ownerId, vineId);
          return s.vines.getComponents(ownerId, vineId);
        },
      }),
    ],
    ['vine list', () => ({ scope: ownerScope(ownerId), call: (s) => s.vines.page(owners(), page) })],
    [
      'cancelled jobs of a worker (heartbeat)',
      () => ({
        scope: ownerScope(ownerId),
        call: (s) => s.jobs.listCancelledForWorker(ownerId, workerId, lastHeartbeat()),
      }),
    ],
    ['busy workers', () => ({ scope: ownerScope(ownerId), call: (s) => s.jobs.busyWorkerIds(ownerId) })],
    [
      'lost-agent sweep',
      () => ({ scope: systemScope, call: (s) => s.jobs.listLost(new Date(SEEDED_AT + 86_400_000).toISOString()) }),
    ],
    ['drift scheduler, due vines', () => ({ scope: systemScope, call: (s) => s.vines.takeDueDriftChecks(now(), 10) })],
    ['outbox claim', () => ({ scope: systemScope, call: (s) => s.outbox.claimDue(now(), now(), 10) })],
    [
      'git provider feedback outbox claim',
      () => ({ scope: systemScope, call: (s) => s.outbox.claimDue(now(), now(), 10, ['vcs_feedback']) }),
    ],
    [
      'notification outbox claim',
      () => ({ scope: systemScope, call: (s) => s.outbox.claimDue(now(), now(), 10, ['notification']) }),
    ],
    ['log retention', () => ({ scope: systemScope, call: (s) => s.logs.deleteOfJobsFinishedBefore(now(), 1000) })],
  ];

  it.each(HOT)('%s reads no large table from end to end', async (_name, hot) => {
    const { scope, call } = hot();
    const statements = await statementsOf(scope, call);
    const plans = await plansOf(url, statements);
    expect(plans.length).toBeGreaterThan(0);
    const scans = plans.flatMap(({ query, plan }) =>
      seqScansOfLargeTables(plan).map((table) => `Seq Scan on ${table} in: ${query.replace(/\s+/g, ' ').trim()}`),
    );
    expect(scans).toEqual([]);
  });

  /** Lists of every job of the owners, whose size is the history: a page must not sort it. */
  const OWNER_WIDE_LISTS = [
    'job list, first page',
    'job list, a later page',
    'job list of an owner and an organization',
  ];

  it.each(OWNER_WIDE_LISTS)('%s is read in index order, never sorted', async (name) => {
    const hot = HOT.find(([candidate]) => candidate === name)?.[1];
    if (!hot) throw new Error(`no hot query ${name}`);
    const { scope, call } = hot();
    const plans = await plansOf(url, await statementsOf(scope, call));
    const lists = plans.filter(({ plan }) => relationsOf(plan).includes('jobs'));
    expect(lists.length).toBeGreaterThan(0);
    expect(lists.filter(({ plan }) => nodeTypesOf(plan).includes('Sort')).map(({ query }) => query)).toEqual([]);
  });

  it('the claim plans the queries inside claim_next_job', async () => {
    const statements = await statementsOf(ownerScope(ownerId), (s) =>
      s.jobs.claimNext({ id: workerId, owner_id: ownerId }, now()),
    );
    const plans = await plansOf(url, statements);
    // The function call and, nested, at least the candidate query on jobs.
    const relations = plans.flatMap(({ plan }) => relationsOf(plan));
    expect(relations).toContain('jobs');
  });
});

function relationsOf(node: PlanNode): string[] {
  return [...(node['Relation Name'] ? [node['Relation Name']] : []), ...(node.Plans ?? []).flatMap(relationsOf)];
}

function nodeTypesOf(node: PlanNode): string[] {
  return [node['Node Type'], ...(node.Plans ?? []).flatMap(nodeTypesOf)];
}
