import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrellisClient } from '@trellis/client';
import type { TestDatabase } from '@trellis/testkit';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { type ControlPlane, createControlPlane } from '../src/index.js';
import {
  BOOTSTRAP_TOKEN,
  INLINE_MAIN_TF,
  JWT_SECRET,
  type RunningControlPlane,
  startControlPlane,
} from './support/controlPlane.js';
import { describeEachDialect, describePostgres } from './support/dialects.js';

const VINES = 12;

/** Runs a statement past the stores (as the connecting role). */
async function exec(database: TestDatabase, sql: string, bindings: unknown[] = []): Promise<Record<string, unknown>[]> {
  if (database.dialect === 'sqlite') {
    const db = new Database(database.url.slice('sqlite://'.length));
    try {
      const statement = db.prepare(sql);
      if (statement.reader) return statement.all(...bindings) as Record<string, unknown>[];
      statement.run(...bindings);
      return [];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const numbered = sql.replace(
      /\?/g,
      (() => {
        let n = 0;
        return () => `$${++n}`;
      })(),
    );
    return (await client.query(numbered, bindings)).rows;
  } finally {
    await client.end();
  }
}

/** Vines with a 60-minute drift schedule, DEPLOYED, and their checks due a minute ago. */
async function dueVines(plane: RunningControlPlane, client: TrellisClient): Promise<string[]> {
  const vineyard = await client.createVineyard('drift');
  const ids: string[] = [];
  for (let i = 0; i < VINES; i += 1) {
    const vine = await client.createConfiguration({
      name: `drift-${i}`,
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    });
    const updated = await client.updateConfiguration(vine.id, { drift_detection: { interval_minutes: 60 } });
    expect(updated.drift_detection).toEqual({ interval_minutes: 60 });
    ids.push(vine.id);
  }
  await makeDue(plane.database);
  return ids;
}

/** Every vine DEPLOYED with its next check at `at` (default: a minute ago, due now). */
async function makeDue(database: TestDatabase, at = new Date(Date.now() - 60_000)): Promise<void> {
  await exec(database, "UPDATE vines SET status = 'DEPLOYED', next_drift_check_at = ?", [at.toISOString()]);
}

async function driftJobsByVine(database: TestDatabase): Promise<Map<string, number>> {
  const rows = await exec(database, "SELECT vine_id, trigger FROM jobs WHERE job_type = 'PLAN'");
  const counts = new Map<string, number>();
  for (const row of rows) {
    const trigger = typeof row.trigger === 'string' ? JSON.parse(row.trigger) : row.trigger;
    if (trigger?.type !== 'drift') continue;
    const vine = String(row.vine_id).toLowerCase();
    counts.set(vine, (counts.get(vine) ?? 0) + 1);
  }
  return counts;
}

/** Polls until `check` holds (no fixed sleep decides the outcome: the assertion after it does). */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function allRescheduled(database: TestDatabase): Promise<boolean> {
  const rows = await exec(database, 'SELECT next_drift_check_at FROM vines');
  return rows.every(
    (row) =>
      new Date(
        String(
          row.next_drift_check_at instanceof Date ? row.next_drift_check_at.toISOString() : row.next_drift_check_at,
        ),
      ).getTime() > Date.now(),
  );
}

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const plane of opened.splice(0).reverse()) await plane.close();
});

describeEachDialect('the drift scheduler', (dialect) => {
  it('queues each due check once, from the interval in createControlPlane, and reschedules it', async () => {
    const plane = await startControlPlane(dialect, { env: { TRELLIS_DRIFT_SCHEDULER_INTERVAL_S: '1' } });
    opened.push(plane);
    const client = await plane.userClient();
    const ids = await dueVines(plane, client);
    await until(() => allRescheduled(plane.database), 'every due check to be taken');
    const counts = await driftJobsByVine(plane.database);
    expect(ids.map((id) => counts.get(id) ?? 0)).toEqual(ids.map(() => 1));
    const [first] = await client.listJobs({ vine_id: ids[0] });
    expect(first).toMatchObject({ job_type: 'PLAN', status: 'QUEUED', trigger: { type: 'drift' } });
  });
});

describeEachDialect('drift and trigger routes', (dialect) => {
  it('answer 200, 202, and problem+json for bad settings, a cycle and a vine that is not deployed', async () => {
    const plane = await startControlPlane(dialect);
    opened.push(plane);
    const client = await plane.userClient();
    const token = await plane.accessToken();
    const [a, b] = await dueVines(plane, client).then((ids) => ids.slice(0, 2) as [string, string]);
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${plane.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const tooOften = await call('PATCH', `/api/cli/configurations/${a}`, { drift_detection: { interval_minutes: 59 } });
    expect(tooOften.status).toBe(400);
    expect(tooOften.headers.get('content-type')).toContain('application/problem+json');
    expect(await tooOften.json()).toMatchObject({ code: 'validation_failed' });

    const after = await call('PATCH', `/api/cli/configurations/${b}`, { triggers: { after: [a] } });
    expect(after.status).toBe(200);
    expect(await after.json()).toMatchObject({ id: b, triggers: { after: [a] } });
    const cycle = await call('PATCH', `/api/cli/configurations/${a}`, { triggers: { after: [b] } });
    expect(cycle.status).toBe(409);
    expect(await cycle.json()).toMatchObject({ code: 'trigger_cycle' });

    const check = await call('POST', `/api/cli/configurations/${a}/drift-check`);
    expect(check.status).toBe(202);
    expect(await check.json()).toMatchObject({ job_type: 'PLAN', trigger: { type: 'drift' }, vine_id: a });
    const busy = await call('POST', `/api/cli/configurations/${a}/drift-check`);
    expect(busy.status).toBe(409);
    expect(await busy.json()).toMatchObject({ code: 'configuration_busy' });
    await exec(plane.database, "UPDATE vines SET status = 'PLANNED' WHERE id = ?", [b]);
    const planned = await call('POST', `/api/cli/configurations/${b}/drift-check`);
    expect(planned.status).toBe(409);
    expect(await planned.json()).toMatchObject({ code: 'configuration_not_deployed' });
  });
});

describeEachDialect('the drift scheduler across a restart', (dialect) => {
  it('checks that fell due while the server was down are queued once after it restarts, and not again', async () => {
    // A timer that never fires during the test: the checks fall due with no scheduler running.
    const first = await startControlPlane(dialect, { env: { TRELLIS_DRIFT_SCHEDULER_INTERVAL_S: '3600' } });
    opened.push(first);
    const ids = await dueVines(first, await first.userClient());
    await first.controlPlane.close();
    expect(await driftJobsByVine(first.database)).toEqual(new Map());

    const start = async (interval: string) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'trellis-drift-restart-'));
      const plane = await createControlPlane({
        env: {
          PORT: '0',
          TRELLIS_DATA_DIR: dataDir,
          DATABASE_URL: first.database.url,
          CLI_JWT_SECRET: JWT_SECRET,
          TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
          TRELLIS_LOG_LEVEL: 'silent',
          TRELLIS_DRIFT_SCHEDULER_INTERVAL_S: interval,
        },
      });
      return {
        plane,
        close: async () => {
          await plane.close();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    };
    const restarted = await start('1');
    await until(() => allRescheduled(first.database), 'the restarted scheduler to take every due check');
    await restarted.close();
    const counts = await driftJobsByVine(first.database);
    expect(ids.map((id) => counts.get(id) ?? 0)).toEqual(ids.map(() => 1));

    // Restarted again at once: nothing is due, nothing is queued twice.
    const again = await start('3600');
    opened.push(again);
    expect(await again.plane.useCases.drift.queueDue()).toEqual([]);
    expect(await driftJobsByVine(first.database)).toEqual(counts);
  });
});

describePostgres('the drift scheduler on two control planes over one Postgres', () => {
  it('queues each due check exactly once (FOR UPDATE SKIP LOCKED), both from the timers and called at once', async () => {
    const a = await startControlPlane('postgres', { env: { TRELLIS_DRIFT_SCHEDULER_INTERVAL_S: '1' } });
    opened.push(a);
    const dataDir = mkdtempSync(join(tmpdir(), 'trellis-drift-b-'));
    const b: ControlPlane = await createControlPlane({
      env: {
        PORT: '0',
        TRELLIS_DATA_DIR: dataDir,
        DATABASE_URL: a.database.url,
        CLI_JWT_SECRET: JWT_SECRET,
        TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        TRELLIS_LOG_LEVEL: 'silent',
        TRELLIS_DRIFT_SCHEDULER_INTERVAL_S: '1',
      },
    });
    opened.push({
      close: async () => {
        await b.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    });
    const client = await a.userClient();
    const ids = await dueVines(a, client);
    await until(() => allRescheduled(a.database), 'every due check to be taken');
    let counts = await driftJobsByVine(a.database);
    expect(ids.map((id) => counts.get(id) ?? 0)).toEqual(ids.map(() => 1));

    // Again, with the two replicas racing each other directly: still one check per vine.
    // Due at a time the replicas' own timers (the real clock, every second) do not reach during
    // the test, but the passes below (asked as of five minutes on) do: only they take the checks.
    await exec(a.database, "UPDATE jobs SET status = 'CANCELLED' WHERE status = 'QUEUED'");
    await makeDue(a.database, new Date(Date.now() + 2 * 60_000));
    const far = new Date(Date.now() + 5 * 60_000);
    const passes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a.controlPlane : b).useCases.drift.queueDue(far)),
    );
    expect(passes.flat()).toHaveLength(VINES);
    counts = await driftJobsByVine(a.database);
    expect(ids.map((id) => counts.get(id) ?? 0)).toEqual(ids.map(() => 2));
  });
});
