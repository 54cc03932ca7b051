/** `trellis configs set`, `configs drift-check` and the drift shown by `configs show`, real binary and server. */
import type { TrellisClient } from '@trellis/client';
import type { Job, VineView } from '@trellis/core';
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

/** Claims the next job as the fake agent and reports it done with `metadata`. */
async function runNext(expected: string, metadata: Record<string, unknown> = {}): Promise<void> {
  const claimed = await agent.claimJob();
  expect(claimed?.job.id).toBe(expected);
  await agent.reportStatus(expected, { status: 'SUCCESS', execution_metadata: metadata });
}

describe('drift and run triggers in the CLI', () => {
  it('sets a schedule and triggers, checks drift now, and shows the result (table and --json)', async () => {
    const client = userClient(server, home);
    const vineyard = await client.createVineyard('drift-cli');
    const source = { type: 'inline' as const, files: { 'main.tf': 'output "x" { value = 1 }\n' } };
    const net = await client.createConfiguration({ name: 'net', vineyard_id: vineyard.id, source });
    const web = await client.createConfiguration({ name: 'web', vineyard_id: vineyard.id, source });

    const set = await trellis('configs', 'set', 'web', '--drift-interval', '120', '--after', 'net');
    expect(set.stdout).toMatch(/Drift checks: +every 120 min, next \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n/);
    expect(set.stdout).toContain(`Runs after:`);
    expect(set.stdout).toContain(net.id);
    const json = JSON.parse((await trellis('configs', 'set', 'web', '--drift-interval', '60', '--json')).stdout);
    expect(json).toMatchObject({ drift_detection: { interval_minutes: 60 }, triggers: { after: [net.id] } });

    const tooOften = await runTrellis(['configs', 'set', 'web', '--drift-interval', '30'], { env: home.env() });
    expect(tooOften.code).toBe(1);
    expect(tooOften.stderr).toContain('[validation_failed]');
    const cycle = await runTrellis(['configs', 'set', 'net', '--after', 'web'], { env: home.env() });
    expect(cycle.code).toBe(1);
    expect(cycle.stderr).toContain('[trigger_cycle]');

    const notDeployed = await runTrellis(['configs', 'drift-check', 'web'], { env: home.env() });
    expect(notDeployed.code).toBe(1);
    expect(notDeployed.stderr).toContain('[configuration_not_deployed]');

    // Deploying net queues a plan of web (run trigger); then web is deployed and checked.
    const netDeploy = await client.createJob({ job_type: 'DEPLOY', configuration_id: net.id });
    await runNext(netDeploy.id);
    const [triggered] = await client.listJobs({ vine_id: web.id });
    expect(triggered).toMatchObject({
      job_type: 'PLAN',
      trigger: { type: 'upstream', vine_id: net.id, job_id: netDeploy.id },
    });
    await runNext((triggered as Job).id);
    const webDeploy = await client.createJob({ job_type: 'DEPLOY', configuration_id: web.id });
    await runNext(webDeploy.id);

    const queued = await trellis('configs', 'drift-check', 'web');
    const [, jobId] = /Drift check queued: job ([0-9a-f-]{36})/.exec(queued.stdout) ?? [];
    expect(jobId).toBeDefined();
    await runNext(jobId as string, { plan_summary: { add: 0, change: 1, destroy: 0 } });

    const shown = await trellis('configs', 'show', 'web');
    expect(shown.stdout).toMatch(/Status: +DEPLOYED\n/);
    expect(shown.stdout).toMatch(
      new RegExp(`Drift: +drifted: 0 to add, 1 to change, 0 to destroy \\(checked .+ UTC, job ${jobId}\\)\\n`),
    );
    // The list shows it at a glance; `net` was never checked.
    const listed = (await trellis('configs', 'list')).stdout;
    expect(listed).toMatch(/^web\s.*\sDEPLOYED\s+drifted\s/m);
    expect(listed).toMatch(/^net\s.*\sDEPLOYED\s+-\s/m);
    const view = JSON.parse((await trellis('configs', 'show', 'web', '--json')).stdout) as VineView;
    expect(view.drift).toMatchObject({ status: 'drifted', job_id: jobId, changes: { add: 0, change: 1, destroy: 0 } });

    const check = JSON.parse((await trellis('configs', 'drift-check', 'web', '--json')).stdout) as Job;
    expect(check).toMatchObject({ job_type: 'PLAN', status: 'QUEUED', trigger: { type: 'drift' } });
    await runNext(check.id, { plan_summary: { add: 0, change: 0, destroy: 0 } });
    expect((await trellis('configs', 'show', 'web')).stdout).toMatch(/Drift: +in sync \(checked/);

    const off = JSON.parse(
      (await trellis('configs', 'set', 'web', '--drift-interval', 'off', '--no-after', '--json')).stdout,
    );
    expect(off).toMatchObject({ drift_detection: null, next_drift_check_at: null, triggers: { after: [] } });
  });
});
