/**
 * Flat costs with size on SQLite (issue 17). SQLite keeps no statistics unless told (and a
 * deployment is not told), so its plans do not depend on how many rows there are: a migrated
 * database shows what every database will do. Each statement a hot store call sends is captured
 * at the driver and explained with `EXPLAIN QUERY PLAN`; none may scan a large table from end to
 * end, and the heartbeat's query may not sort the agent's whole history.
 */
import { randomUUID } from 'node:crypto';
import { memberScope, ownerScope, type Scope, type Stores, systemScope } from '@trellis/core';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SqlStore } from '../src/index.js';
import { rawConnection } from './support/rawSql.js';
import { useMigratedDatabases } from './support/sqlStores.js';

const LARGE_TABLES = ['jobs', 'log_chunks', 'vines', 'outbox'];
/** Hot queries that read a range of an index by design: the due vines, the oldest finished jobs. */
const RANGE_BY_DESIGN = ['drift scheduler, due vines', 'log retention'];

/** The SQL of every statement run while `work` runs (prepared statements are reused: caught as they run). */
async function capture(work: () => Promise<unknown>): Promise<string[]> {
  const statements: string[] = [];
  const probe = new Database(':memory:');
  const prototype = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<
    'all' | 'get' | 'run' | 'iterate',
    (this: { source: string }, ...args: unknown[]) => unknown
  >;
  probe.close();
  const originals = { all: prototype.all, get: prototype.get, run: prototype.run, iterate: prototype.iterate };
  for (const method of ['all', 'get', 'run', 'iterate'] as const) {
    const original = originals[method];
    prototype[method] = function (this: { source: string }, ...args: unknown[]) {
      statements.push(this.source);
      return original.apply(this, args);
    };
  }
  try {
    await work();
  } finally {
    Object.assign(prototype, originals);
  }
  return statements;
}

const AT = new Date().toISOString();
const ownerId = randomUUID();
const orgId = randomUUID();
const workerId = randomUUID();
const jobId = randomUUID();
const vineId = randomUUID();

const HOT: Array<[string, Scope, (stores: Stores) => Promise<unknown>]> = [
  ['claim', ownerScope(ownerId), (s) => s.jobs.claimNext({ id: workerId, owner_id: ownerId }, AT)],
  ['job list', ownerScope(ownerId), (s) => s.jobs.page(ownerId, { limit: 50 })],
  [
    'job list of an owner and an organization',
    memberScope(ownerId, [orgId]),
    (s) => s.jobs.page([ownerId, orgId], { limit: 50 }),
  ],
  ['job list of a vine', ownerScope(ownerId), (s) => s.jobs.page(ownerId, { limit: 50 }, { vine_id: vineId })],
  ['job list by status', ownerScope(ownerId), (s) => s.jobs.page(ownerId, { limit: 50 }, { status: 'FAILED' })],
  ['log page', ownerScope(ownerId), (s) => s.logs.list(ownerId, jobId, 0, 100)],
  ['vine page', ownerScope(ownerId), (s) => s.vines.get(ownerId, vineId)],
  [
    'cancelled jobs of a worker (heartbeat)',
    ownerScope(ownerId),
    (s) => s.jobs.listCancelledForWorker(ownerId, workerId, AT),
  ],
  ['lost-agent sweep', systemScope, (s) => s.jobs.listLost(AT)],
  ['drift scheduler, due vines', systemScope, (s) => s.vines.takeDueDriftChecks(AT, 10)],
  ['outbox claim', systemScope, (s) => s.outbox.claimDue(AT, AT, 10)],
  ['git provider feedback outbox claim', systemScope, (s) => s.outbox.claimDue(AT, AT, 10, ['vcs_feedback'])],
  ['notification outbox claim', systemScope, (s) => s.outbox.claimDue(AT, AT, 10, ['notification'])],
  ['log retention', systemScope, (s) => s.logs.deleteOfJobsFinishedBefore(AT, 1000)],
];

const databases = useMigratedDatabases('sqlite');
let store: SqlStore;
let url: string;
let plans: Map<string, string[]>;

beforeAll(async () => {
  ({ store, url } = await databases.openStore());
  plans = new Map();
  const explained: Array<[string, string[]]> = [];
  for (const [name, scope, call] of HOT) {
    explained.push([name, await capture(() => store.uow.run(scope, call))]);
  }
  const raw = rawConnection(url);
  try {
    for (const [name, statements] of explained) {
      const details: string[] = [];
      for (const sql of statements.filter((text) => /^\s*(select|update|delete|with)\b/i.test(text))) {
        // Values do not change a plan without statistics: every parameter is bound to NULL.
        const parameters = new Array((sql.match(/\?/g) ?? []).length).fill(null);
        const rows = (await raw.raw(`EXPLAIN QUERY PLAN ${sql}`, parameters)) as Array<{ detail: string }>;
        details.push(`${sql.replace(/\s+/g, ' ')} => ${rows.map((row) => row.detail).join(' | ')}`);
      }
      plans.set(name, details);
    }
  } finally {
    await raw.destroy();
  }
});

afterAll(async () => {
  await store?.close();
});

it.each(HOT.map(([name]) => name))('%s reads no large table without narrowing it', (name) => {
  const details = plans.get(name) ?? [];
  expect(details.length).toBeGreaterThan(0);
  const rangeByDesign = RANGE_BY_DESIGN.includes(name);
  const scans = details.filter((line) => unboundedReads(line, rangeByDesign).length > 0);
  expect(scans).toEqual([]);
});

it("the heartbeat reads only the worker's jobs finished since, in order (m023)", () => {
  const [query] = (plans.get('cancelled jobs of a worker (heartbeat)') ?? []).filter(
    (line) => line.includes('CANCELLED') || line.includes('claimed_by_worker_id'),
  );
  expect(query).toMatch(
    /SEARCH jobs USING (COVERING )?INDEX jobs_worker_status_finished_idx \(claimed_by_worker_id=\? AND status=\? AND finished_at>\?\)/,
  );
  expect(query).not.toMatch(/TEMP B-TREE/);
});

/**
 * The steps of a plan line that read a large table (by name or alias) without an equality to
 * narrow it: a SCAN, or a SEARCH on a range alone (`rowid>?` reads everything after the key)
 * unless the query reads a range by design (what is due, what is old).
 */
function unboundedReads(line: string, rangeByDesign: boolean): string[] {
  const [sql = '', plan = ''] = line.split(' => ');
  const isLarge = (name: string) =>
    LARGE_TABLES.some((table) => name === table || new RegExp(`\\b${table}\\b\\W+(AS\\W+)?${name}\\b`, 'i').test(sql));
  return plan.split(' | ').filter((step) => {
    const [, kind, name] = /^(SCAN|SEARCH) (\w+)/.exec(step) ?? [];
    if (!kind || !name || !isLarge(name)) return false;
    return kind === 'SCAN' || (!rangeByDesign && !/=\?/.test(step));
  });
}

it.each(['job list', 'job list of an owner and an organization'])('%s is read in index order, never sorted', (name) => {
  const details = plans.get(name) ?? [];
  expect(details.length).toBeGreaterThan(0);
  expect(details.filter((line) => line.includes('TEMP B-TREE'))).toEqual([]);
});
