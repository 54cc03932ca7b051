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

describe.skipIf(!TOFU)('cancelling jobs and stopping agents', { timeout: 180_000 }, () => {
  let server: E2eServer;
  let agent: AgentProcess;

  beforeAll(async () => {
    server = await startServer();
    agent = await startAgent(server, { name: 'canceller', args: ['--cancel-grace', '30'] });
  });

  afterAll(async () => {
    await agent?.stop();
    killLeftovers();
    await server?.stop();
  });

  /** Waits until the job's log shows the slow apply running. */
  const applying = (id: string) =>
    eventually(`job ${id} to be applying`, async () =>
      (await logText(server, id)).includes('progress 2/') ? true : undefined,
    );

  it('interrupts a long apply with SIGINT; the lock is released and the next job of the vine runs', async () => {
    const vine = await vineOf(server, 'slow', 'slow-apply', { seconds: '60' });
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    const next = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    await applying(job.id);
    await server.user.cancelJob(job.id);

    const log = await eventually('the engine to stop', async () => {
      const text = await logText(server, job.id);
      return text.includes('the engine stopped after the interrupt') ? text : undefined;
    });
    expect(log).toContain('the job was cancelled: interrupting the engine');
    expect(log).toContain('Interrupt received.');
    expect(log).not.toContain('progress 60/60');
    expect(log).not.toContain('was killed');
    expect((await server.user.getJob(job.id)).status).toBe('CANCELLED');

    // The next job of the vine takes the state lock the interrupted engine released.
    const planned = await waitForJob(server, next.id);
    expect(planned.status).toBe('SUCCESS');
    const nextLog = await logText(server, next.id);
    expect(nextLog).not.toContain('Error acquiring the state lock');
    // The interrupted apply saved its state (a tainted resource): the plan replaces it.
    expect(planned.execution_metadata.plan_summary).toEqual({ add: 1, change: 0, destroy: 1 });
  });

  it('on SIGTERM with --on-shutdown cancel, cancels the running job and exits cleanly', async () => {
    const stopping = await startAgent(server, { name: 'stopping', args: ['--on-shutdown', 'cancel'] });
    try {
      const vine = await vineOf(server, 'stop-cancel', 'slow-apply', { seconds: '60' });
      const job = await server.user.createJob({
        job_type: 'DEPLOY',
        configuration_id: vine.id,
        assigned_worker_id: stopping.workerId,
      });
      await applying(job.id);
      expect(await stopping.stop('SIGTERM')).toBe(0);
      const ended = await server.user.getJob(job.id);
      expect(ended).toMatchObject({ status: 'CANCELLED', error_message: 'cancelled: the agent was stopped' });
      expect(await logText(server, job.id)).toContain('the agent is shutting down: interrupting the engine');
      expect((await server.user.getConfiguration(vine.id)).status).not.toBe('DEPLOYING');
    } finally {
      await stopping.stop('SIGKILL');
    }
  });

  it('on SIGTERM by default, finishes the running job before exiting', async () => {
    const finishing = await startAgent(server, { name: 'finishing' });
    try {
      const vine = await vineOf(server, 'stop-finish', 'slow-apply', { seconds: '8' });
      const job = await server.user.createJob({
        job_type: 'DEPLOY',
        configuration_id: vine.id,
        assigned_worker_id: finishing.workerId,
      });
      await applying(job.id);
      expect(await finishing.stop('SIGTERM')).toBe(0);
      expect((await server.user.getJob(job.id)).status).toBe('SUCCESS');
      expect(await logText(server, job.id)).toContain('progress 8/8');
    } finally {
      await finishing.stop('SIGKILL');
    }
  });
});
