/**
 * Issue 30, fenced and never-lost state: an agent cut off (SIGSTOP) in the middle of an apply for
 * longer than the lost-job timeout. The control plane fails its job as lost, but the engine it
 * started goes on applying, and its last state is stored: as the current state when no later job
 * had the configuration (which then shows `state_after_lost` until an admin acknowledges it), and
 * as a `rejected` version, with the later job's state current, when one did. Real server, agents
 * and OpenTofu.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  eventually,
  killLeftovers,
  logText,
  startAgent,
  startServer,
  TOFU,
  vineOf,
  waitForJob,
} from '../support/e2e.js';

/** Lost after 5 s of silence, swept every second; the apply holds the engine for 20 s. */
const SETTINGS = { TRELLIS_LOST_JOB_TIMEOUT_S: '5', TRELLIS_SWEEP_INTERVAL_S: '1', TRELLIS_HEARTBEAT_TIMEOUT_S: '5' };
const APPLY_SECONDS = '20';

describe.skipIf(!TOFU)('an agent cut off mid-apply past the lost-job timeout', { timeout: 240_000 }, () => {
  let server: E2eServer;
  const agents: AgentProcess[] = [];

  beforeAll(async () => {
    server = await startServer(SETTINGS);
  }, 60_000);

  afterAll(async () => {
    for (const agent of agents) agent.child.kill('SIGCONT');
    await Promise.all(agents.map((agent) => agent.stop('SIGKILL')));
    killLeftovers();
    await server?.stop();
  });

  /** A DEPLOY whose engine is applying when its agent is stopped, and which the control plane then fails as lost. */
  async function lostDeploy(name: string) {
    const agent = await startAgent(server, { name });
    agents.push(agent);
    const vine = await vineOf(server, name, 'slow-apply', { seconds: APPLY_SECONDS });
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    await eventually(`job ${job.id} to be applying`, async () =>
      (await logText(server, job.id)).includes('progress 2/') ? true : undefined,
    );
    // The partition: the agent no longer beats (its engine, a child process, runs on).
    agent.child.kill('SIGSTOP');
    const failed = await waitForJob(server, job.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error_message).toContain('the agent running this job was lost');
    return { agent, vine, job };
  }

  async function stateText(vineId: string, versionId: number): Promise<string> {
    return new Response(await server.user.downloadStateVersion(vineId, versionId)).text();
  }

  it("stores the lost job's final state as current when no later job had the configuration; an admin acknowledges it", async () => {
    const { agent, vine, job } = await lostDeploy('lost-alone');
    const late = await eventually(
      'the late state',
      async () => (await server.user.stateHistory(vine.id)).state_after_lost ?? undefined,
      90_000,
    );
    expect(late).toMatchObject({ job_id: job.id, rejected: false });
    const history = await server.user.stateHistory(vine.id);
    const current = history.versions.find((version) => !version.rejected);
    expect(current).toMatchObject({ id: late.version_id, job_id: job.id, after_lost: true });
    // The resource the engine created is in the configuration's current state.
    const state = JSON.parse(await stateText(vine.id, late.version_id));
    expect(
      state.resources.map((resource: { type: string; name: string }) => `${resource.type}.${resource.name}`),
    ).toEqual(['terraform_data.slow']);
    // The engine released what it held: the state is free for the next job.
    expect(history.lock).toBeNull();

    // The link comes back; this agent then stops, so the next test's jobs go to its agents.
    agent.child.kill('SIGCONT');
    await agent.stop();
    expect(await server.user.acknowledgeStateAfterLost(vine.name)).toEqual({ vine_id: vine.id, acknowledged: 1 });
    expect((await server.user.stateHistory(vine.id)).state_after_lost).toBeNull();
  });

  it('keeps the late state as rejected when a later job took the configuration first, whose state stays current', async () => {
    const { agent, vine, job } = await lostDeploy('lost-overtaken');
    const next = await startAgent(server, { name: 'next' });
    agents.push(next);
    const later = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    await eventually(`job ${later.id} to be applying`, async () =>
      (await logText(server, later.id)).includes('progress 1/') ? true : undefined,
    );
    const late = await eventually(
      'the rejected late state',
      async () => (await server.user.stateHistory(vine.id)).state_after_lost ?? undefined,
      90_000,
    );
    expect(late).toMatchObject({ job_id: job.id, rejected: true });
    expect((await waitForJob(server, later.id)).status).toBe('SUCCESS');

    const history = await server.user.stateHistory(vine.id);
    const current = history.versions.find((version) => !version.rejected);
    expect(current?.job_id).toBe(later.id);
    const rejected = history.versions.find((version) => version.id === late.version_id);
    expect(rejected).toMatchObject({ job_id: job.id, after_lost: true, rejected: true });
    // Kept for recovery: the lost engine's resource is in the rejected version.
    expect(JSON.parse(await stateText(vine.id, late.version_id)).resources).toHaveLength(1);
    agent.child.kill('SIGCONT');
  });
});
