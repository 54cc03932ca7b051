import { type JobQueueView, TrellisClient } from '@trellis/client';
import { checkTestPostgres, createTestDatabase, type TestDatabase } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTrellis, startWithSecondPerson, TempHome, TestServer, userClient } from './harness.js';

const postgres = await checkTestPostgres();
const INLINE = { type: 'inline' as const, files: { 'main.tf': 'output "x" { value = 1 }\n' } };

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !postgres.available)(
    `the job queue: GET /api/cli/queue and trellis queue (${dialect})`,
    { timeout: 120_000 },
    () => {
      let server: TestServer;
      let home: TempHome;
      let database: TestDatabase | undefined;
      let strangerToken: string;

      beforeAll(async () => {
        if (dialect === 'postgres') database = await createTestDatabase('postgres');
        server = new TestServer();
        home = new TempHome();
        const env = database ? { DATABASE_URL: database.url } : {};
        const start = server.start.bind(server);
        server.start = (port, extra = {}) => start(port, { ...env, ...extra });
        strangerToken = await startWithSecondPerson(server, home, 'stranger@example.test');
      }, 90_000);

      afterAll(async () => {
        await server?.destroy();
        home?.remove();
        await database?.drop();
      });

      const trellis = (...args: string[]) => runTrellis(args, { env: home.env() });
      const queueJson = async (...args: string[]) => {
        const result = await trellis('queue', '--json', ...args);
        expect(result.code, result.stderr).toBe(0);
        return JSON.parse(result.stdout) as JobQueueView;
      };

      it('lists queued jobs in claim order with their pool and why they wait, and the agents claim them in that order', async () => {
        const user = userClient(server, home);
        const vineyard = await user.createVineyard('queue-yard');
        const [web, api] = await Promise.all(
          ['queue-web', 'queue-api'].map((name) =>
            user.createConfiguration({ name, vineyard_id: vineyard.id, source: INLINE }),
          ),
        );
        const webFirst = await user.createJob({ job_type: 'PLAN', configuration_id: web?.id as string });
        const apiPlan = await user.createJob({ job_type: 'PLAN', configuration_id: api?.id as string });
        const webSecond = await user.createJob({ job_type: 'PLAN', configuration_id: web?.id as string });

        // No agent yet: every job waits for one.
        let queue = await user.getQueue();
        expect(queue.total).toBe(3);
        expect(queue.jobs.map((entry) => [entry.job.id, entry.position])).toEqual([
          [webFirst.id, 1],
          [apiPlan.id, 2],
          [webSecond.id, 3],
        ]);
        expect(queue.jobs[0]).toMatchObject({
          vine: { id: web?.id, name: 'queue-web' },
          vineyard: { id: vineyard.id, name: 'queue-yard' },
          pool: { kind: 'personal', org_name: null, assigned_worker: null, agents: { total: 0, online: 0, idle: 0 } },
          waiting_for: { reason: 'no_agent_online' },
        });
        expect(queue.jobs[0]?.waited_seconds).toBeGreaterThanOrEqual(0);
        // The second job of a configuration waits for the first, whatever the agents.
        expect(queue.jobs[2]?.waiting_for).toMatchObject({ reason: 'vine_busy', job_id: webFirst.id });

        // An agent comes online and idle: the head of each configuration can go.
        const registration = await user.registerAgent({ name: 'queue-agent' });
        const agent = new TrellisClient({
          baseUrl: server.url,
          auth: { kind: 'worker', workerId: registration.worker_id, workerToken: registration.worker_token },
        });
        await agent.heartbeat('1.0.0', []);
        queue = await user.getQueue();
        expect(queue.jobs[0]?.pool.agents).toEqual({ total: 1, online: 1, idle: 1 });
        expect(queue.jobs[0]?.waiting_for).toBeNull();
        expect(queue.jobs[1]?.waiting_for).toBeNull();

        // The CLI prints the same, and the job's own detail its position.
        const printed = await queueJson();
        expect(printed).toEqual(withoutWaited(queue, printed));
        const show = await trellis('jobs', 'show', webSecond.id, '--json');
        expect(JSON.parse(show.stdout)).toMatchObject({ queue_position: 3 });
        const table = await trellis('queue');
        expect(table.code, table.stderr).toBe(0);
        expect(table.stdout).toMatch(/POS\s+JOB\s+TYPE\s+CONFIG\s+VINEYARD\s+WAITED\s+AGENT POOL\s+AGENTS\s+WAITS FOR/);
        expect(table.stdout).toMatch(new RegExp(`1\\s+${webFirst.id}\\s+PLAN\\s+queue-web\\s+queue-yard`));
        expect(table.stdout).toContain('your agents');
        expect(table.stdout).toContain(`configuration busy (job ${webFirst.id.slice(0, 8)})`);

        // The agent claims position 1; then the queue moves up and says why the rest wait.
        expect((await agent.claimJob())?.job.id).toBe(webFirst.id);
        queue = await user.getQueue();
        expect(queue.jobs.map((entry) => [entry.job.id, entry.position])).toEqual([
          [apiPlan.id, 1],
          [webSecond.id, 2],
        ]);
        expect(queue.jobs[0]?.pool.agents).toEqual({ total: 1, online: 1, idle: 0 });
        expect(queue.jobs[0]?.waiting_for).toMatchObject({ reason: 'agents_busy' });
        expect(queue.jobs[1]?.waiting_for).toMatchObject({ reason: 'vine_busy', job_id: webFirst.id });
        await user.cancelJob(webFirst.id);
        expect((await agent.claimJob())?.job.id).toBe(apiPlan.id);
        await user.cancelJob(apiPlan.id);
        expect((await agent.claimJob())?.job.id).toBe(webSecond.id);
        await user.cancelJob(webSecond.id);
        expect(await user.getQueue()).toEqual({ jobs: [], total: 0, limit: 50 });
        const empty = await trellis('queue');
        expect(empty.stderr).toContain('No job is queued.');
      });

      it("shows an organization's pool, filters by organization, and shows nobody else's jobs", async () => {
        const user = userClient(server, home);
        expect((await trellis('orgs', 'create', 'queue-org')).code).toBe(0);
        const org = (await user.listOrgs()).find((candidate) => candidate.name === 'queue-org');
        const vineyard = await user.createVineyard('queue-org-yard', { orgId: org?.id as string });
        const vine = await user.createConfiguration({
          name: 'queue-org-web',
          vineyard_id: vineyard.id,
          source: INLINE,
        });
        const mine = await user.createConfiguration({
          name: 'queue-mine',
          vineyard_id: (await user.createVineyard('queue-mine-yard')).id,
          source: INLINE,
        });
        const orgJob = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
        const myJob = await user.createJob({ job_type: 'PLAN', configuration_id: mine.id });

        // Each owner's queue is numbered on its own: both are at position 1.
        const all = await user.getQueue();
        expect(all.jobs.map((entry) => [entry.job.id, entry.position])).toEqual([
          [orgJob.id, 1],
          [myJob.id, 1],
        ]);
        // The person's own agent (online, from the test before) never takes the organization's job.
        expect(all.jobs[0]?.pool).toMatchObject({
          kind: 'organization',
          org_name: 'queue-org',
          agents: { total: 0, online: 0, idle: 0 },
        });
        expect(all.jobs[0]?.waiting_for?.message).toContain('no agent of the organization queue-org is online');

        const onlyOrg = await queueJson('--org', 'queue-org');
        expect(onlyOrg.jobs.map((entry) => entry.job.id)).toEqual([orgJob.id]);
        expect((await queueJson('--org', 'personal')).jobs.map((entry) => entry.job.id)).toEqual([myJob.id]);
        expect((await queueJson('--limit', '1')).jobs).toHaveLength(1);
        const limited = await trellis('queue', '--limit', '1');
        expect(limited.stderr).toContain('2 jobs are queued; the first 1 are shown');

        // Someone who is not a member sees none of them, and the API checks the limit.
        const stranger = new TrellisClient({
          baseUrl: server.url,
          auth: { kind: 'bearer', accessToken: () => strangerToken },
        });
        expect(await stranger.getQueue()).toEqual({ jobs: [], total: 0, limit: 50 });
        const tooMany = await fetch(`${server.url}/api/cli/queue?limit=500`, {
          headers: { Authorization: `Bearer ${home.readAuth().access_token}` },
        });
        expect(tooMany.status).toBe(400);
        expect(await tooMany.json()).toMatchObject({ code: 'validation_failed' });
        const anonymous = await fetch(`${server.url}/api/cli/queue`);
        expect(anonymous.status).toBe(401);

        await user.cancelJob(orgJob.id);
        await user.cancelJob(myJob.id);
      });
    },
  );
}

/** `expected` with the waited seconds of `actual` (time moves between two reads). */
function withoutWaited(expected: JobQueueView, actual: JobQueueView): JobQueueView {
  return {
    ...expected,
    jobs: expected.jobs.map((entry, index) => ({
      ...entry,
      waited_seconds: actual.jobs[index]?.waited_seconds ?? entry.waited_seconds,
    })),
  };
}
