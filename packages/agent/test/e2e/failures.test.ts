import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
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

describe.skipIf(!TOFU)('agents and servers that go away mid-job', { timeout: 180_000 }, () => {
  let server: E2eServer;

  beforeAll(async () => {
    server = await startServer({ TRELLIS_LOST_JOB_TIMEOUT_S: '5', TRELLIS_SWEEP_INTERVAL_S: '1' });
  });

  afterAll(async () => {
    killLeftovers();
    await server?.stop();
  });

  const applying = (id: string) =>
    eventually(`job ${id} to be applying`, async () =>
      (await logText(server, id)).includes('progress 2/') ? true : undefined,
    );

  it('a job whose agent is killed -9 is failed by the lost-agent sweep; the restarted agent takes new work', async () => {
    const agent = await startAgent(server, { name: 'doomed' });
    const vine = await vineOf(server, 'orphaned', 'slow-apply', { seconds: '60' });
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    await applying(job.id);
    agent.child.kill('SIGKILL');
    await agent.exited;

    const failed = await waitForJob(server, job.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error_message).toMatch(/agent running this job was lost/);
    expect((await server.user.getConfiguration(vine.id)).status).toBe('FAILED');

    const restarted = await startAgent(server, { credentials: agent, workDir: agent.workDir });
    try {
      // Same vine: the plan takes the state lock the killed run held, released with its job.
      const next = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      const done = await waitForJob(server, next.id);
      expect(done).toMatchObject({ status: 'SUCCESS', claimed_by_worker_id: agent.workerId });
      expect(await logText(server, next.id)).not.toContain('Error acquiring the state lock');
    } finally {
      await restarted.stop();
    }
  });

  it('rides out a server restart mid-job: the job succeeds and its log has every line exactly once', async () => {
    const agent = await startAgent(server, { name: 'steady' });
    try {
      const vine = await vineOf(server, 'restarted', 'slow-apply', { seconds: '12' });
      const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
      await applying(job.id);
      // Down long enough that the agent's heartbeats (every second here) and log posts must fail.
      await server.restart(2500);

      const done = await waitForJob(server, job.id);
      expect(done.status).toBe('SUCCESS');
      const log = await logText(server, job.id);
      for (let i = 1; i <= 12; i++) {
        const line = `terraform_data.slow (local-exec): progress ${i}/12\n`;
        expect(log.split(line).length - 1, `"${line.trim()}"`).toBe(1);
      }
      expect(log.split('Apply complete! Resources: 1 added').length - 1).toBe(1);
      expect(agent.output()).toMatch(/"msg":"log post failed; retrying"|"msg":"heartbeat failed"/);
    } finally {
      await agent.stop();
    }
  });
});
