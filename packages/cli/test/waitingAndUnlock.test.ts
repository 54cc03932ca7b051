import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TrellisClient } from '@trellis/client';
import { AGENT_BIN, checkTestPostgres, createTestDatabase, runProcess, type TestDatabase } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, type RunResult, RunningTrellis, runTrellis, TempHome, TestServer, userClient } from './harness.js';

const postgres = await checkTestPostgres();

function runAgent(args: string[], env: Record<string, string>): Promise<RunResult> {
  return runProcess(process.execPath, [AGENT_BIN, ...args], { env });
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !postgres.available)(
    `why a job waits, organization agents and unlock (${dialect})`,
    { timeout: 120_000 },
    () => {
      let server: TestServer;
      let home: TempHome;
      let database: TestDatabase | undefined;

      beforeAll(async () => {
        if (dialect === 'postgres') database = await createTestDatabase('postgres');
        server = await new TestServer().start(0, database ? { DATABASE_URL: database.url } : {});
        home = new TempHome();
        await login(server, home);
      }, 60_000);

      afterAll(async () => {
        await server?.destroy();
        home?.remove();
        await database?.drop();
      });

      const trellis = (...args: string[]) => runTrellis(args, { env: home.env() });
      const show = async (id: string) => {
        const result = await trellis('jobs', 'show', id, '--json');
        expect(result.code, result.stderr).toBe(0);
        return JSON.parse(result.stdout) as {
          status: string;
          waiting_for: { reason: string; message: string; job_id?: string } | null;
        };
      };

      it("says why an organization's job waits, and registers the organization's agent in one command", async () => {
        const user = userClient(server, home);
        // The person's own agent is online and idle: it never runs the organization's jobs.
        const mine = await user.registerAgent({ name: 'my-laptop' });
        await new TrellisClient({
          baseUrl: server.url,
          auth: { kind: 'worker', workerId: mine.worker_id, workerToken: mine.worker_token },
        }).heartbeat('1.0.0', []);
        expect((await trellis('orgs', 'create', 'acme')).code).toBe(0);
        const org = (await user.listOrgs()).find((candidate) => candidate.name === 'acme');
        const vineyard = await user.createVineyard('acme-yard', { orgId: org?.id as string });
        const vine = await user.createConfiguration({
          name: 'acme-web',
          vineyard_id: vineyard.id,
          source: { type: 'inline', files: { 'main.tf': 'output "x" { value = 1 }\n' } },
        });
        const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });

        const waiting = await show(job.id);
        expect(waiting.status).toBe('QUEUED');
        expect(waiting.waiting_for).toMatchObject({ reason: 'no_agent_online' });
        expect(waiting.waiting_for?.message).toContain('no agent of the organization acme is online');
        expect(waiting.waiting_for?.message).toContain('trellis-agent register --org acme');
        const text = await trellis('jobs', 'show', job.id);
        expect(text.stdout).toMatch(/Waiting:\s+no agent of the organization acme is online/);

        // The follow says why it waits (on a pipe: a line of its own), then stops on Ctrl-C.
        const follow = new RunningTrellis(['jobs', 'wait', job.id], home.env());
        await follow.waitFor(/queued: no agent of the organization acme is online/);
        follow.child.kill('SIGINT');
        await follow.done;

        // One command: the organization's agent, its credentials file written (0600).
        const file = join(home.dir, 'acme-agent.json');
        const registered = await runAgent(
          ['register', '--name', 'acme-1', '--org', 'acme', '--credentials-file', file],
          home.env(),
        );
        expect(registered.code, registered.stderr).toBe(0);
        expect(registered.stdout).toContain('of the organization acme');
        const credentials = JSON.parse(readFileSync(file, 'utf8')) as { worker_id: string; worker_token: string };
        const workers = JSON.parse((await trellis('workers', 'list', '--org', 'acme', '--json')).stdout) as {
          id: string;
        }[];
        expect(workers.map((worker) => worker.id)).toEqual([credentials.worker_id]);
        const agent = new TrellisClient({
          baseUrl: server.url,
          auth: { kind: 'worker', workerId: credentials.worker_id, workerToken: credentials.worker_token },
        });
        await agent.heartbeat('1.0.0', []);
        expect((await show(job.id)).waiting_for).toBeNull();

        // The agent runs it; a second job of the configuration waits for the first.
        const claimed = await agent.claimJob();
        expect(claimed?.job.id).toBe(job.id);
        const second = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
        const busy = await show(second.id);
        expect(busy.waiting_for).toMatchObject({ reason: 'vine_busy', job_id: job.id });
        expect(busy.waiting_for?.message).toContain(job.id);

        // Its engine takes the state lock; an admin force-unlocks it, audited.
        const lock = await fetch(`${server.url}/api/state/${vine.id}`, {
          method: 'LOCK',
          headers: {
            authorization: `Basic ${Buffer.from(`${credentials.worker_id}:${claimed?.state_token}`).toString('base64')}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ ID: 'lock-of-a-dead-engine', Operation: 'OperationTypeApply', Who: 'engine@host' }),
        });
        expect(lock.status).toBe(200);
        const refused = await trellis('configs', 'state', 'unlock', 'acme-web');
        expect(refused.code).not.toBe(0);
        expect(refused.stderr).toContain('pass --yes when not at a terminal');
        const unlocked = await trellis('configs', 'state', 'unlock', 'acme-web', '--yes', '--json');
        expect(unlocked.code, unlocked.stderr).toBe(0);
        expect(JSON.parse(unlocked.stdout)).toMatchObject({
          vine_id: vine.id,
          released: { lock_id: 'lock-of-a-dead-engine', info: { Who: 'engine@host' } },
        });
        expect((await user.stateHistory(vine.id)).lock).toBeNull();
        const again = await trellis('configs', 'state', 'unlock', 'acme-web', '--yes');
        expect(again.code).not.toBe(0);
        expect(again.stderr).toContain('is not locked');
        const audit = await user.listAuditPage({ action: 'state.force_unlock', orgId: org?.id as string });
        expect(audit.items.map((entry) => [entry.target.id, entry.details.held_by])).toEqual([
          [vine.id, 'engine@host'],
        ]);
      });
    },
  );
}
