/**
 * Fault scenario 3 (issue 30): a control plane replica `SIGKILL`ed while an agent's job ships its
 * log through it, and while an idle agent's claim long-polls on it; the other replica, on the same
 * Postgres and artifact store, serves from then on (Toxiproxy, in front, is pointed at it as a
 * balancer would). The run completes with every log line stored once, the next job is claimed
 * through the other replica, and the invariant checker finds nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, logText, TOFU, waitForJob } from '../support/e2e.js';
import { type FaultRig, startFaultRig, TOXIPROXY, violationsOf } from './rig.js';

const SETTINGS = { TRELLIS_LOST_JOB_TIMEOUT_S: '120', TRELLIS_HEARTBEAT_TIMEOUT_S: '120' };
const APPLY_SECONDS = 12;

describe.skipIf(!TOFU || !TOXIPROXY)('fault scenario 3: a replica killed during log ingest and claims', () => {
  let rig: FaultRig;

  beforeAll(async () => {
    rig = await startFaultRig(SETTINGS, { replicas: 2 });
  }, 180_000);

  afterAll(async () => {
    await rig?.stop();
  });

  it('the other replica serves: the run completes with its log once, the next job is claimed there', {
    timeout: 300_000,
  }, async () => {
    const { server, proxy } = rig;
    const other = rig.second;
    if (!other) throw new Error('the rig has no second replica');
    const otherServer = { ...server, url: other.url, user: other.user };
    await rig.startAgent('through-the-balancer');
    const vine = await rig.ledgerVine('replica-killed', { seconds: String(APPLY_SECONDS) });
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    await eventually(
      `job ${job.id} to be applying`,
      async () => ((await logText(server, job.id)).includes('progress 3/') ? true : undefined),
      120_000,
    );

    // Mid log ingest: the replica dies; the balancer sends everything to the other.
    await server.kill();
    await proxy.setUpstream(new URL(other.url).host);
    const ended = await waitForJob(otherServer, job.id, undefined, 180_000);
    expect(ended.status).toBe('SUCCESS');
    const progress = (await logText(otherServer, job.id)).match(/progress \d+\/\d+/g) ?? [];
    expect(progress).toEqual(Array.from({ length: APPLY_SECONDS }, (_, i) => `progress ${i + 1}/${APPLY_SECONDS}`));

    // Mid claim: the killed replica is back and the agent long-polls on it; it dies again.
    await server.restart();
    await proxy.setUpstream(new URL(server.url).host);
    // Long enough for the agent's retried claim (a 5 s long poll) to be held by it.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    await server.kill();
    await proxy.setUpstream(new URL(other.url).host);
    const next = await other.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    expect((await waitForJob(otherServer, next.id, undefined, 180_000)).status).toBe('SUCCESS');

    const violations = await rig.check(otherServer);
    expect(violations, violationsOf(violations)).toEqual([]);
  });
});
