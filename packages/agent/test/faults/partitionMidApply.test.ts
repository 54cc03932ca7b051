/**
 * Fault scenario 1 (issue 30): an agent cut off from the control plane by Toxiproxy in the middle
 * of an apply (every byte dropped both ways, connections held open) for longer than the lost-job
 * timeout, then healed. The control plane fails the job as lost; the engine's final state is
 * still stored (`after_lost`), and the invariant checker finds nothing orphaned, doubled or
 * unaudited.
 */
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, logText, TOFU, waitForJob } from '../support/e2e.js';
import { type FaultRig, startFaultRig, TOXIPROXY, violationsOf } from './rig.js';

/** Lost after 5 s of silence, swept every second. */
const SETTINGS = { TRELLIS_LOST_JOB_TIMEOUT_S: '5', TRELLIS_SWEEP_INTERVAL_S: '1', TRELLIS_HEARTBEAT_TIMEOUT_S: '5' };

/** Whether the engine left an errored.tfstate somewhere in the agent's work dir. */
function erroredStateIn(dir: string): boolean {
  try {
    return readdirSync(dir, { recursive: true }).some((entry) => String(entry).endsWith('errored.tfstate'));
  } catch {
    return false;
  }
}

describe.skipIf(!TOFU || !TOXIPROXY)('fault scenario 1: an agent cut off mid-apply past the lost-job timeout', () => {
  let rig: FaultRig;

  beforeAll(async () => {
    rig = await startFaultRig(SETTINGS);
  }, 120_000);

  afterAll(async () => {
    await rig?.stop();
  });

  it("stores the apply's state as after_lost once the link heals; nothing is orphaned", {
    timeout: 300_000,
  }, async () => {
    const { server, proxy } = rig;
    await rig.startAgent('cut-off');
    const vine = await rig.ledgerVine('cut-mid-apply', { seconds: '25' });
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    await eventually(
      `job ${job.id} to be applying`,
      async () => ((await logText(server, job.id)).includes('progress 2/') ? true : undefined),
      120_000,
    );

    await proxy.cut();
    const failed = await waitForJob(server, job.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error_message).toContain('the agent running this job was lost');
    await proxy.heal();

    const late = await eventually(
      'the late state',
      async () => (await server.user.stateHistory(vine.id)).state_after_lost ?? undefined,
      120_000,
    );
    expect(late).toMatchObject({ job_id: job.id, rejected: false });
    // The agent is done with the job (it learnt that it was lost) before the checker runs.
    const agent = rig.agents[0];
    await eventually('the agent to end the job', () =>
      /"job (lost|ended)/.test(agent?.output() ?? '') ? true : undefined,
    );

    const violations = await rig.check();
    expect(violations, violationsOf(violations)).toEqual([]);
  });

  it('keeps the state the engine could not store (errored.tfstate) and pushes it once the link is back', {
    timeout: 300_000,
  }, async () => {
    const { server, proxy } = rig;
    const agent = await rig.startAgent('cut-through-push');
    const vine = await rig.ledgerVine('cut-through-push', { seconds: '6' });
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    await eventually(
      `job ${job.id} to be applying`,
      async () => ((await logText(server, job.id)).includes('progress 2/') ? true : undefined),
      120_000,
    );

    // Refused, not held: the engine's final state write fails after its retries, and it leaves
    // the state in errored.tfstate in its working directory.
    await proxy.disable();
    const failed = await waitForJob(server, job.id);
    expect(failed.error_message).toContain('the agent running this job was lost');
    await eventually(
      'the engine to give up on its state write',
      () => (erroredStateIn(agent.workDir) ? true : undefined),
      180_000,
    );
    await proxy.enable();

    const late = await eventually(
      'the errored state, pushed by the agent',
      async () => (await server.user.stateHistory(vine.id)).state_after_lost ?? undefined,
      120_000,
    );
    expect(late).toMatchObject({ job_id: job.id, rejected: false });
    await eventually('the agent to end the job', () => (/"job (lost|ended)/.test(agent.output()) ? true : undefined));

    const violations = await rig.check();
    expect(violations, violationsOf(violations)).toEqual([]);
  });
});
