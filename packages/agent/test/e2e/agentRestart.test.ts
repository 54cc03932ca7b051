/**
 * Issue 25 item 2: an agent killed with SIGKILL in the middle of an apply and started again at
 * once with the same credentials. Its first heartbeat says it runs nothing, so the control plane
 * ends the dead process's job at once (not at the lost-agent sweep: its timeout here is an hour),
 * releases the state lock the dead engine held, shows the agent ONLINE, and the next plan of the
 * vine runs and succeeds with no manual cancel. And a person's cancel of the job of an agent
 * that is offline releases the lock too. Real server, agent and OpenTofu, on SQLite and Postgres.
 */
import { checkTestPostgres, createTestDatabase, type TestDatabase, testPostgresPoolSize } from '@trellis/testkit';
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

const postgres = await checkTestPostgres();

/** Never within a test: only the agent's restart (or a person) may end the job. */
const SETTINGS = { TRELLIS_LOST_JOB_TIMEOUT_S: '3600', TRELLIS_HEARTBEAT_TIMEOUT_S: '5' };

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(!TOFU || (dialect === 'postgres' && !postgres.available))(
    `an agent killed mid-apply (${dialect})`,
    { timeout: 240_000 },
    () => {
      let server: E2eServer;
      let database: TestDatabase | undefined;
      const agents: AgentProcess[] = [];

      beforeAll(async () => {
        if (dialect === 'postgres') database = await createTestDatabase('postgres');
        server = await startServer(
          database
            ? { ...SETTINGS, DATABASE_URL: database.url, TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()) }
            : SETTINGS,
        );
      }, 60_000);

      afterAll(async () => {
        await Promise.all(agents.map((agent) => agent.stop('SIGKILL')));
        killLeftovers();
        await server?.stop();
        await database?.drop();
      });

      const applying = (id: string) =>
        eventually(`job ${id} to be applying`, async () =>
          (await logText(server, id)).includes('progress 2/') ? true : undefined,
        );
      const lockOf = async (vineId: string) => (await server.user.stateHistory(vineId)).lock;

      it('restarted at once with the same credentials: the job ends, its lock goes, the next plan succeeds', async () => {
        const first = await startAgent(server, { name: 'restarting' });
        agents.push(first);
        const vine = await vineOf(server, 'restarted', 'slow-apply', { seconds: '120' });
        const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
        await applying(job.id);
        expect(await lockOf(vine.id)).not.toBeNull();

        first.child.kill('SIGKILL');
        await first.exited;
        const second = await startAgent(server, { credentials: first, workDir: first.workDir });
        agents.push(second);

        const ended = await waitForJob(server, job.id);
        expect(ended.status).toBe('FAILED');
        expect(ended.error_message).toBe('the agent running this job restarted: the job ended with its old process');
        expect(await lockOf(vine.id)).toBeNull();
        expect((await server.user.getConfiguration(vine.id)).status).toBe('FAILED');
        const agent = await eventually('the restarted agent to be ONLINE', async () => {
          const worker = await server.user.getWorker(first.workerId);
          return worker.status === 'ONLINE' ? worker : undefined;
        });
        expect(agent.status).toBe('ONLINE');
        const audit = await server.user.listAuditPage({ action: 'job.fail', target_id: job.id });
        expect(audit.items.map((entry) => [entry.actor.type, entry.details.reason])).toEqual([
          ['worker', 'agent_restarted'],
        ]);

        // No manual cancel, no unlock: the next plan of the vine takes the lock and succeeds.
        const next = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
        const planned = await waitForJob(server, next.id);
        expect(planned).toMatchObject({ status: 'SUCCESS', claimed_by_worker_id: first.workerId });
        expect(await logText(server, next.id)).not.toContain('Error acquiring the state lock');
        await second.stop();
      });

      it("a person's cancel of the job of an agent that is offline releases the lock", async () => {
        const doomed = await startAgent(server, { name: 'gone' });
        agents.push(doomed);
        const vine = await vineOf(server, 'abandoned', 'slow-apply', { seconds: '120' });
        const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
        await applying(job.id);
        doomed.child.kill('SIGKILL');
        await doomed.exited;
        await eventually('the killed agent to be OFFLINE', async () =>
          (await server.user.getWorker(doomed.workerId)).status === 'OFFLINE' ? true : undefined,
        );
        expect(await lockOf(vine.id)).not.toBeNull();

        expect((await server.user.cancelJob(job.id)).status).toBe('CANCELLED');
        expect(await lockOf(vine.id)).toBeNull();

        const other = await startAgent(server, { name: 'other' });
        agents.push(other);
        const next = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
        expect((await waitForJob(server, next.id)).status).toBe('SUCCESS');
        expect(await logText(server, next.id)).not.toContain('Error acquiring the state lock');
        await other.stop();
      });
    },
  );
}
