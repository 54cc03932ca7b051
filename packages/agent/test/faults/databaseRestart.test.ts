/**
 * Fault scenario 4 (issue 30): the control plane's Postgres restarts in the middle of a run, while
 * the agent ships its log. While it is down, requests are refused cleanly (`503` with
 * `Retry-After`, never a `500`) and `/readyz` is unready; once it is back, `/readyz` is ready
 * again, the agent's retried requests go through, the run completes and every log line is stored
 * once, in order, and the background tasks run again (the lost-job sweep, a global task whose lead
 * lives on a database session, and so must be taken again). Once a clean restart, once a crash
 * (`kill -9`, crash recovery). The invariant checker runs after each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, logText, TOFU, waitForJob } from '../support/e2e.js';
import { type FaultRig, startFaultRig, TOXIPROXY, violationsOf } from './rig.js';

const METRICS_TOKEN = 'faults-metrics-token-0123456789';
const SETTINGS = {
  TRELLIS_LOST_JOB_TIMEOUT_S: '120',
  TRELLIS_HEARTBEAT_TIMEOUT_S: '120',
  TRELLIS_SWEEP_INTERVAL_S: '1',
  TRELLIS_METRICS_TOKEN: METRICS_TOKEN,
};
const APPLY_SECONDS = 20;
const DOWN_MS = 4_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!TOFU || !TOXIPROXY)('fault scenario 4: the database restarts during a run and its log ingest', () => {
  let rig: FaultRig;

  beforeAll(async () => {
    rig = await startFaultRig(SETTINGS);
    await rig.startAgent('steady');
  }, 120_000);

  afterAll(async () => {
    await rig?.stop();
  });

  /** What a request to the control plane is answered while the database is down. */
  async function answerWhileDown(path: string) {
    const response = await fetch(`${rig.server.url}${path}`, {
      headers: { authorization: `Bearer ${rig.server.user.token}` },
    });
    const body = await response.text();
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body };
  }

  /** Successful runs of the lost-job sweep so far, from the server's `/metrics`. */
  async function sweeps(): Promise<number> {
    const response = await fetch(`${rig.server.url}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const text = await response.text();
    const line = text
      .split('\n')
      .find(
        (row) =>
          row.startsWith('trellis_background_task_runs_total{') &&
          row.includes('task="lost-job-sweep"') &&
          row.includes('outcome="succeeded"'),
      );
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
  }

  async function runThrough(name: string, outage: () => Promise<void>) {
    const { server } = rig;
    const vine = await rig.ledgerVine(name, { seconds: String(APPLY_SECONDS) });
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    await eventually(
      `job ${job.id} to be applying`,
      async () => ((await logText(server, job.id)).includes('progress 3/') ? true : undefined),
      120_000,
    );

    await outage();
    await eventually(
      '/readyz to be unready',
      async () => ((await answerWhileDown('/readyz')).status === 503 ? true : undefined),
      30_000,
    );
    const api = await answerWhileDown(`/api/jobs/${job.id}`);
    expect(api.status).toBe(503);
    expect(api.retryAfter).not.toBeNull();
    expect(JSON.parse(api.body)).toMatchObject({ code: 'database_unavailable' });
    await sleep(DOWN_MS);
    await rig.postgres.start();
    await eventually('/readyz to be ready', async () =>
      (await answerWhileDown('/readyz')).status === 200 ? true : undefined,
    );
    // The background tasks run again: the sweep (every second here) succeeds after the restart.
    const sweptBefore = await sweeps();
    await eventually('the lost-job sweep to run again', async () =>
      (await sweeps()) > sweptBefore ? true : undefined,
    );

    const ended = await waitForJob(server, job.id, undefined, 180_000);
    expect(ended.status).toBe('SUCCESS');
    // Every line the engine printed while the database was down or up is stored once, in order.
    const progress = (await logText(server, job.id)).match(/progress \d+\/\d+/g) ?? [];
    expect(progress).toEqual(Array.from({ length: APPLY_SECONDS }, (_, i) => `progress ${i + 1}/${APPLY_SECONDS}`));
    const violations = await rig.check();
    expect(violations, violationsOf(violations)).toEqual([]);
  }

  it(
    'a clean restart: 503 with Retry-After and unready while it is down, the run completes',
    { timeout: 300_000 },
    () => runThrough('db-restart', () => rig.postgres.stop()),
  );

  it('a crash (kill -9) and crash recovery: the same', { timeout: 300_000 }, async () => {
    await rig.startAgent('steady-2');
    await runThrough('db-crash', async () => rig.postgres.kill9());
  });
});
