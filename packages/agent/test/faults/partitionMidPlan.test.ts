/**
 * Fault scenario 2 (issue 30): an agent partitioned from the control plane in the middle of a
 * DEPLOY's plan (the plan held open by a state it waits for), healed before the lost-job timeout:
 * the job finishes normally, once. And the variant where only the answers are lost for a while
 * (requests still arrive: log batches, the engine's state writes), then the link heals with every
 * held connection reset: each retried request is taken once, the job ends once. The invariant
 * checker runs after each.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, TOFU, waitForJob } from '../support/e2e.js';
import { type FaultRig, type HeldState, heldState, startFaultRig, TOXIPROXY, violationsOf } from './rig.js';

/** A lost-job timeout far longer than the cuts below: the job must not be lost. */
const SETTINGS = { TRELLIS_LOST_JOB_TIMEOUT_S: '60', TRELLIS_SWEEP_INTERVAL_S: '1', TRELLIS_HEARTBEAT_TIMEOUT_S: '60' };
/** How long a cut lasts: a few heartbeats and log flushes, well within the timeout. */
const CUT_MS = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function asked(held: HeldState): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the plan never read the held state')), 120_000);
  });
  await Promise.race([held.asked, deadline]).finally(() => clearTimeout(timer));
}

function ledgerText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

describe.skipIf(!TOFU || !TOXIPROXY)('fault scenario 2: an agent partitioned mid-plan, healed in time', () => {
  let rig: FaultRig;
  const held: HeldState[] = [];

  beforeAll(async () => {
    rig = await startFaultRig(SETTINGS);
    await rig.startAgent('partitioned');
  }, 120_000);

  afterAll(async () => {
    for (const state of held) state.release();
    await Promise.all(held.map((state) => state.close()));
    await rig?.stop();
  });

  it('cut both ways mid-plan and healed: the job finishes once', { timeout: 300_000 }, async () => {
    const { server, proxy } = rig;
    const state = await heldState();
    held.push(state);
    const vine = await rig.ledgerVine('cut-mid-plan', { seconds: '2', slow_state_url: state.url });
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    await asked(state);

    await proxy.cut();
    await sleep(CUT_MS);
    // The plan goes on (the held state is not behind the proxy); the apply's state writes wait for the link.
    state.release();
    await sleep(CUT_MS);
    await proxy.heal();

    const ended = await waitForJob(server, job.id, undefined, 180_000);
    expect(ended.status).toBe('SUCCESS');
    const violations = await rig.check();
    expect(violations, violationsOf(violations)).toEqual([]);
  });

  it('answers lost while the plan, the apply and its state writes go on, then every held connection reset: the job ends once', {
    timeout: 300_000,
  }, async () => {
    const { server, proxy } = rig;
    await rig.startAgent('deaf');
    const state = await heldState();
    held.push(state);
    const vine = await rig.ledgerVine('answers-lost', { seconds: '4', slow_state_url: state.url });
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    await asked(state);

    // The plan ends while the answers are lost: its state unlock arrives (the lock is released),
    // its answer does not; the engine retries it once the link heals.
    await proxy.loseAnswers();
    state.release();
    await sleep(CUT_MS);
    await proxy.heal();
    // Then the apply: its answers are lost from the moment it created its resource, through the
    // end of its provisioner and its final state write.
    await eventually(
      'the apply to begin',
      () => (/^begin /m.test(ledgerText(vine.ledger)) ? true : undefined),
      120_000,
    );
    await proxy.loseAnswers();
    await eventually('the apply to end', () => (/^end /m.test(ledgerText(vine.ledger)) ? true : undefined), 120_000);
    await sleep(CUT_MS);
    await proxy.heal();

    const ended = await waitForJob(server, job.id, undefined, 180_000);
    expect(ended.status).toBe('SUCCESS');
    const violations = await rig.check();
    expect(violations, violationsOf(violations)).toEqual([]);
  });

  it('a claim whose answer is lost: the job goes back in the queue and runs once', {
    timeout: 300_000,
  }, async () => {
    const { server, proxy } = rig;
    const agent = await rig.startAgent('claim-lost');
    await eventually('the agent to be claiming', () =>
      agent.output().includes('"msg":"heartbeat"') ? true : undefined,
    );
    const vine = await rig.ledgerVine('claim-lost', { seconds: '1' });

    // The agent's long-polling claim takes the job; its answer never reaches the agent.
    await proxy.loseAnswers();
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    await waitForJob(server, job.id, ['PROCESSING', 'SUCCESS', 'FAILED', 'CANCELLED']);
    await sleep(CUT_MS);
    await proxy.heal();

    // Far sooner than the lost-job timeout (the agent heartbeats all along): the claim the agent
    // never got is undone, and the job runs once, on the agent's next claim.
    const ended = await waitForJob(server, job.id, undefined, 90_000);
    expect(ended.status).toBe('SUCCESS');
    const audit = await server.user.listAuditPage({ action: 'job.requeue' });
    expect(audit.items.map((entry) => [entry.target.id, entry.details.reason])).toEqual([[job.id, 'claim_unanswered']]);
    const violations = await rig.check();
    expect(violations, violationsOf(violations)).toEqual([]);
  });
});
