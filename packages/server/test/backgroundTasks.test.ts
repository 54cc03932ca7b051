/**
 * The control plane's background work runs on core's scheduler (docs/architecture.md, Background
 * work): every loop is a task, turned here by a ManualTicker so no test waits for real intervals;
 * a failed run is logged and counted and the schedule goes on; on Postgres each global task runs
 * on one replica, once per interval across replicas, and another takes over when it stops.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { coreServices, type Stores, type UnitOfWork } from '@trellis/core';
import type { Logger } from '@trellis/http';
import { FakeClock, ManualTicker, parsePrometheusText, sampleValue } from '@trellis/testkit';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type ControlPlane, createControlPlane, resolve } from '../src/index.js';
import {
  BOOTSTRAP_TOKEN,
  JWT_SECRET,
  type RunningControlPlane,
  startControlPlane,
  vineyardWithConfiguration,
} from './support/controlPlane.js';
import { describeEachDialect, describePostgres } from './support/dialects.js';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';
const GLOBAL_TASKS = ['lost-job-sweep', 'drift-checks', 'log-retention', 'audit-retention', 'deleted-vine-retention'];
const LOCAL_TASKS = ['heartbeat-flush', 'outbox-deliveries'];
/** The live views' tasks (keepalive, re-read): local, on intervals of their own. */
const STREAM_TASKS = ['live-log-keepalive', 'live-log-recheck', 'live-lists-keepalive'];
/** Every interval the same, so one advance of it is one turn of every task. */
const EVERY = '10';
const INTERVALS = {
  TRELLIS_HEARTBEAT_FLUSH_S: EVERY,
  TRELLIS_SWEEP_INTERVAL_S: EVERY,
  TRELLIS_DRIFT_SCHEDULER_INTERVAL_S: EVERY,
  TRELLIS_RETENTION_INTERVAL_S: EVERY,
  TRELLIS_OUTBOX_INTERVAL_S: EVERY,
};

async function scrape(url: string) {
  const response = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(response.status).toBe(200);
  return parsePrometheusText(await response.text());
}

/** `stores.jobs.listLost` fails while `broken.on`: the sweep's first read, as a database hiccup would. */
function hiccupingUnitOfWork(real: UnitOfWork, broken: { on: boolean }): UnitOfWork {
  const failing = (stores: Stores): Stores =>
    new Proxy(stores, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'jobs' || !broken.on) return value;
        return new Proxy(value as object, {
          get(jobs, name) {
            if (name === 'listLost') return async () => Promise.reject(new Error('database hiccup'));
            const member = Reflect.get(jobs, name);
            return typeof member === 'function' ? member.bind(jobs) : member;
          },
        });
      },
    });
  return {
    run: (scope, work) => real.run(scope, work),
    read: (scope, work) => real.read(scope, (stores) => work(failing(stores))),
    check: () => real.check(),
  };
}

describeEachDialect('the background tasks of a control plane', (dialect) => {
  let server: RunningControlPlane;
  const ticker = new ManualTicker();
  const clock = new FakeClock(new Date());
  const broken = { on: false };
  const errors: Array<{ data: Record<string, unknown>; message: string | undefined }> = [];
  const logger: Logger = {
    info() {},
    warn() {},
    error(data, message) {
      errors.push({ data: data as Record<string, unknown>, message });
    },
  };

  beforeAll(async () => {
    server = await startControlPlane(dialect, {
      clock,
      ticker,
      logger,
      env: { ...INTERVALS, TRELLIS_METRICS_TOKEN: METRICS_TOKEN, TRELLIS_LOST_JOB_TIMEOUT_S: '120' },
      overrides: (container) => {
        const real = resolve(container, coreServices.unitOfWork);
        container.register(coreServices.unitOfWork.id, { useValue: hiccupingUnitOfWork(real, broken) });
      },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('has every loop of the control plane as a task, each on its interval', () => {
    const all = [...GLOBAL_TASKS, ...LOCAL_TASKS, ...STREAM_TASKS];
    expect(server.controlPlane.scheduler.taskIds.sort()).toEqual(all.sort());
    expect(ticker.active).toBe(all.length);
  });

  it('sweeps lost agents on its interval; a failed run is logged and counted, and the next one runs', async () => {
    const { scheduler } = server.controlPlane;
    const user = await server.userClient();
    const agent = await server.agentClient(user, 'lost');
    await agent.heartbeat('1.0.0');
    const { configuration } = await vineyardWithConfiguration(user, 'sweep');
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    await agent.claimJob();
    clock.advance({ seconds: 121 });
    const before = scheduler.stats()['lost-job-sweep'];

    broken.on = true;
    ticker.advance(10);
    await scheduler.idle();
    expect(scheduler.stats()['lost-job-sweep']).toEqual({ ...before, runs: before.runs + 1, failures: 1 });
    expect(errors).toEqual([
      {
        data: expect.objectContaining({ task: 'lost-job-sweep', err: expect.any(Error) }),
        message: 'background task failed',
      },
    ]);
    expect((await user.getJob(job.id)).status).toBe('PROCESSING');

    broken.on = false;
    ticker.advance(10);
    await scheduler.idle();
    expect((await user.getJob(job.id)).status).toBe('FAILED');
    const metrics = await scrape(server.url);
    const runs = (outcome: string) =>
      sampleValue(metrics, 'trellis_background_task_runs_total', { task: 'lost-job-sweep', outcome });
    expect([runs('failed'), runs('succeeded')]).toEqual([1, before.runs + 1]);
    expect(
      sampleValue(metrics, 'trellis_background_task_duration_seconds_count', { task: 'lost-job-sweep' }),
    ).toBeGreaterThanOrEqual(2);
  });
});

describePostgres('global tasks on two control planes over one Postgres', () => {
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  it('run once per interval across both, on one of them; the other takes over when it stops', async () => {
    const tickers = { a: new ManualTicker(), b: new ManualTicker() };
    const a = await startControlPlane('postgres', { ticker: tickers.a, env: INTERVALS });
    closing.push(() => a.close());
    const dataDir = mkdtempSync(join(tmpdir(), 'trellis-tasks-b-'));
    const b: ControlPlane = await createControlPlane({
      ticker: tickers.b,
      env: {
        ...INTERVALS,
        PORT: '0',
        TRELLIS_DATA_DIR: dataDir,
        DATABASE_URL: a.database.url,
        CLI_JWT_SECRET: JWT_SECRET,
        TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        TRELLIS_LOG_LEVEL: 'silent',
      },
    });
    closing.push(async () => {
      await b.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
    const planes = { a: a.controlPlane, b };
    const turn = async (order: Array<'a' | 'b'>) => {
      for (const name of order) tickers[name].advance(10);
      await Promise.all([planes.a.scheduler.idle(), planes.b.scheduler.idle()]);
    };

    // The first interval: b's turn comes first and takes every global task, then a's comes.
    // Later ones: both replicas' turns, in either order; b keeps the tasks it took.
    const TURNS = 6;
    await turn(['b']);
    await turn(['a']);
    for (let i = 1; i < TURNS; i += 1) await turn(i % 2 === 0 ? ['b', 'a'] : ['a', 'b']);
    const [statsA, statsB] = [planes.a.scheduler.stats(), planes.b.scheduler.stats()];
    for (const task of GLOBAL_TASKS) {
      const [ranA, ranB] = [statsA[task]?.runs ?? 0, statsB[task]?.runs ?? 0];
      expect(ranA + ranB, task).toBe(TURNS);
      // The replica that took a task first keeps it from turn to turn.
      expect([ranA, ranB], task).toEqual([0, TURNS]);
      expect(statsA[task], task).toEqual({ runs: 0, failures: 0, skipped: TURNS });
    }
    for (const task of LOCAL_TASKS) {
      expect([statsA[task]?.runs, statsB[task]?.runs], task).toEqual([TURNS, TURNS]);
    }

    // b stops (and resigns): a runs every global task from its next turn on.
    await closing.pop()?.();
    for (let i = 0; i < 3; i += 1) await turn(['a']);
    const after = planes.a.scheduler.stats();
    for (const task of GLOBAL_TASKS) {
      expect(after[task], task).toEqual({ runs: 3, failures: 0, skipped: TURNS });
    }
  });
});
