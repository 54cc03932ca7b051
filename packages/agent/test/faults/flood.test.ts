/**
 * Fault scenario 7 (issue 30): a flood of queued jobs drained by 8 agents while one of the two
 * control plane replicas restarts every 10 s (a `SIGKILL`, then two clean `SIGTERM` stops, and
 * so on). Each replica has its balancer (a Toxiproxy proxy) and half of the agents; while the
 * restarting replica is down its balancer sends to the other, as a balancer with health checks
 * would. The engine is the bench's stand-in (`bench/fake-engine.sh`, it answers at once), so what
 * is exercised is the orchestration: claims, heartbeats, logs and status reports racing the
 * restarts. Every job ends exactly once, none is started twice, no agent is ever answered `500`,
 * every job succeeds (one whose claim's answer was cut on its way goes back in the queue when the
 * agent says it never got it, and runs once), and the invariant checker finds nothing.
 */
import { fileURLToPath } from 'node:url';
import { connectPostgres } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/e2e.js';
import { type FaultRig, startFaultRig, TOXIPROXY, violationsOf } from './rig.js';

const FAKE_ENGINE = fileURLToPath(new URL('../../../../bench/fake-engine.sh', import.meta.url));
const SETTINGS = { TRELLIS_LOST_JOB_TIMEOUT_S: '120', TRELLIS_HEARTBEAT_TIMEOUT_S: '120' };
/** The flood: this many DEPLOY jobs queued at once, over `VINES` configurations (one vine's jobs run one at a time). */
const JOBS = 500;
const VINES = 50;
const AGENTS = 8;
const RESTART_EVERY_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!TOXIPROXY)('fault scenario 7: a flood of jobs while a replica restarts every 10 s', () => {
  let rig: FaultRig;

  beforeAll(async () => {
    rig = await startFaultRig(SETTINGS, { replicas: 2 });
  }, 180_000);

  afterAll(async () => {
    await rig?.stop();
  });

  it(`${JOBS} jobs, ${AGENTS} agents: each ends once, none runs twice, no agent sees a 500`, {
    timeout: 900_000,
  }, async () => {
    const { server, proxy } = rig;
    const restarting = rig.second;
    if (!restarting) throw new Error('the rig has no second replica');
    const steady = new URL(server.url).host;
    const balancer = await rig.createProxy('agents-b', new URL(restarting.url).host);

    const began = Date.now();
    const vines: string[] = [];
    for (let i = 0; i < VINES; i++) vines.push((await rig.ledgerVine(`flood-${i}`)).id);
    const queued: string[] = [];
    const queue = async (from: number) => {
      for (let i = from; i < JOBS; i += 4) {
        const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vines[i % VINES] as string });
        queued.push(job.id);
      }
    };
    await Promise.all([0, 1, 2, 3].map(queue));
    const queuedAt = Date.now();

    for (let i = 0; i < AGENTS; i++) {
      await rig.startAgent(`flood-${i}`, {
        via: i % 2 === 0 ? proxy : balancer,
        env: { TRELLIS_ENGINE_BIN: FAKE_ENGINE, TRELLIS_AGENT_LOG_LEVEL: 'info' },
      });
    }

    // One replica restarts every 10 s while the agents drain the queue.
    let draining = true;
    let restarts = 0;
    const restartLoop = (async () => {
      // The first at once (however fast the machine drains the queue, it drains through restarts).
      let last = Date.now() - RESTART_EVERY_MS;
      while (draining) {
        // A restart begins every 10 s, or as soon as the last one is done when it took longer.
        await sleep(last + RESTART_EVERY_MS - Date.now());
        if (!draining) break;
        last = Date.now();
        restarts += 1;
        // A kill first, then two clean stops, and so on.
        const signal = restarts % 3 === 1 ? 'SIGKILL' : 'SIGTERM';
        await restarting.process.stop(signal);
        await balancer.setUpstream(steady);
        await restarting.restart();
        await balancer.setUpstream(new URL(restarting.url).host);
      }
    })();

    const db = await connectPostgres(rig.postgres.url);
    let statuses: Record<string, number> = {};
    let endedAt: number | undefined;
    let unsuccessful: string[] = [];
    let requeued = 0;
    try {
      await eventually(
        `the ${JOBS} jobs to end`,
        async () => {
          const rows = await db.query<{ status: string; count: string }>(
            'SELECT status, count(*) AS count FROM jobs GROUP BY status',
          );
          statuses = Object.fromEntries(rows.rows.map((row) => [row.status, Number(row.count)]));
          const ended = (statuses.QUEUED ?? 0) + (statuses.PROCESSING ?? 0) === 0;
          if (ended) endedAt ??= Date.now();
          // Through a kill and a clean stop at least, however fast the queue drains.
          return ended && restarts >= 2 ? true : undefined;
        },
        720_000,
      );
      unsuccessful = (
        await db.query<{ id: string; status: string; error_message: string | null }>(
          "SELECT id, status, error_message FROM jobs WHERE status <> 'SUCCESS' ORDER BY seq",
        )
      ).rows.map((row) => `${row.id} ${row.status}: ${row.error_message}`);
      const [count] = (
        await db.query<{ count: string }>("SELECT count(*) AS count FROM audit_entries WHERE action = 'job.requeue'")
      ).rows;
      requeued = Number(count?.count ?? 0);
    } finally {
      draining = false;
      await restartLoop;
      await db.end();
    }
    const drainedAt = endedAt ?? Date.now();
    console.log(
      `flood: ${JOBS} jobs over ${VINES} vines queued in ${((queuedAt - began) / 1000).toFixed(1)} s, drained by ${AGENTS} agents in ${((drainedAt - queuedAt) / 1000).toFixed(1)} s through ${restarts} restarts`,
    );

    const lines = rig.agents.flatMap((agent) => agent.output().split('\n'));
    // The restarts reached the agents: calls failed (refused, cut, `503 shutting_down`) and were retried.
    const failedCalls = lines.filter((line) => line.includes('"level":"warn"')).length;
    // A claim cut after the control plane took the job for it (a connection cut by a kill or by the
    // balancer's switch, the answer on its way): the agent names the jobs it runs, and the job it
    // never got goes back in the queue (`job.requeue`) and runs once (docs/reliability.md).
    const claimsWithoutAnswer = lines.filter((line) => line.includes('after a claim without an answer')).length;
    console.log(
      `flood: ${failedCalls} failed calls retried by the agents, ${claimsWithoutAnswer} claims without an answer, ${requeued} jobs put back in the queue for it`,
    );
    expect(queued).toHaveLength(JOBS);
    expect(failedCalls).toBeGreaterThan(0);
    expect(unsuccessful).toEqual([]);
    expect(statuses.SUCCESS).toBe(JOBS);
    const violations = await rig.check();
    expect(violations, violationsOf(violations)).toEqual([]);
  });
});
