/** `trellis configs list` as the fleet (issue 29): its filters and `--counts`, real binary and server. */
import type { TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAgent, login, runTrellis, TempHome, TestServer, userClient } from './harness.js';

let server: TestServer;
let home: TempHome;
let agent: TrellisClient;

beforeAll(async () => {
  server = await new TestServer().start();
  home = new TempHome();
  await login(server, home);
  agent = await fakeAgent(server, home);
});
afterAll(async () => {
  await server?.destroy();
  home?.remove();
});

async function trellis(...args: string[]) {
  const result = await runTrellis(args, { env: home.env() });
  if (result.code !== 0) throw new Error(`trellis ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result;
}

const failedPolicy = {
  policy_id: '00000000-0000-4000-8000-0000000000f1',
  version: 1,
  name: 'no-deletes',
  enforcement: 'mandatory',
  passed: false,
  messages: ['aws_s3_bucket.logs would be deleted'],
};

describe('trellis configs list: the fleet', () => {
  it('filters by status, drift and policy, prints the policy column, and counts with --counts', async () => {
    const client = userClient(server, home);
    const vineyard = await client.createVineyard('fleet-cli');
    const source = { type: 'inline' as const, files: { 'main.tf': 'output "x" { value = 1 }\n' } };
    const web = await client.createConfiguration({ name: 'web', vineyard_id: vineyard.id, source });
    await client.createConfiguration({ name: 'db', vineyard_id: vineyard.id, source });
    // web's plan fails a policy (the agent reports it).
    const plan = await client.createJob({ job_type: 'PLAN', configuration_id: web.id });
    expect((await agent.claimJob())?.job.id).toBe(plan.id);
    await agent.reportStatus(plan.id, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 }, policy_results: [failedPolicy] },
    });

    const failed = JSON.parse((await trellis('configs', 'list', '--policy', 'failed', '--json')).stdout);
    expect(failed.map((vine: { name: string }) => vine.name)).toEqual(['web']);
    expect(failed[0]).toMatchObject({ policy: 'failed', status: 'PLANNED', vineyard_name: 'fleet-cli' });
    const fresh = (await trellis('configs', 'list', '--status', 'NEW', '--drift', 'never_checked')).stdout;
    const rows = fresh
      .trimEnd()
      .split('\n')
      .map((line) => line.split(/ {2,}/));
    expect(rows[0]?.slice(0, 7)).toEqual(['NAME', 'PROJECT', 'VINEYARD', 'STATUS', 'DRIFT', 'POLICY', 'TAGS']);
    expect(rows.slice(1).map((row) => row.slice(0, 6))).toEqual([['db', 'db', 'fleet-cli', 'NEW', '-', '-']]);
    const none = await trellis('configs', 'list', '--tag', 'nothing-tagged');
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('No configurations match.');

    const counts = JSON.parse((await trellis('configs', 'list', '--counts', '--json')).stdout);
    expect(counts).toMatchObject({
      total: 2,
      status: { NEW: 1, PLANNED: 1 },
      drift: { never_checked: 2 },
      policy: { failed: 1, none: 1, passed: 0 },
    });
    const forPeople = (await trellis('configs', 'list', '--counts', '--status', 'PLANNED')).stdout;
    expect(forPeople).toMatch(/^total: 1$/m);
    expect(forPeople).toMatch(/^policy: passed 0, failed 1, none 0$/m);

    const bad = await runTrellis(['configs', 'list', '--changed-since', 'last tuesday'], { env: home.env() });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('[validation_failed]');
    const unknown = await runTrellis(['configs', 'list', '--drift', 'sideways'], { env: home.env() });
    expect(unknown.code).not.toBe(0);
  });
});
