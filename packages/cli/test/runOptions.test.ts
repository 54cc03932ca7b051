/**
 * Run options (issue 27) from the CLI: `trellis plan CONFIG --target ADDR --replace ADDR
 * --no-refresh` queues a PLAN whose snapshot carries them; a bad address is refused by the server
 * with its field; the deploy of that plan carries them too (it applies what was planned, and is
 * not refused as stale). Real binary, real server, a fake agent.
 */
import type { TrellisClient } from '@trellis/client';
import type { Job } from '@trellis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAgent, login, runTrellis, TempHome, TestServer, userClient } from './harness.js';

let server: TestServer;
let home: TempHome;
let agent: TrellisClient;
let client: TrellisClient;

beforeAll(async () => {
  server = await new TestServer().start();
  home = new TempHome();
  await login(server, home);
  agent = await fakeAgent(server, home);
  client = userClient(server, home);
});
afterAll(async () => {
  await server?.destroy();
  home?.remove();
});

const run = (...args: string[]) => runTrellis(args, { env: home.env() });

describe('trellis plan with run options', () => {
  it('queues a targeted plan, refuses a bad address, and deploys that plan as planned', async () => {
    const vineyard = await client.createVineyard('targets');
    const source = { type: 'inline' as const, files: { 'main.tf': 'output "x" { value = 1 }\n' } };
    await client.createConfiguration({ name: 'web', vineyard_id: vineyard.id, source });

    const queued = await run(
      'plan',
      'web',
      '--target',
      'null_resource.a',
      '--target',
      'module.net["eu"]',
      '--replace',
      'null_resource.b',
      '--no-refresh',
      '--detach',
      '--json',
    );
    expect(queued.code, queued.stderr).toBe(0);
    const plan = JSON.parse(queued.stdout) as Job;
    expect(plan.config_snapshot.run_options).toEqual({
      target: ['null_resource.a', 'module.net["eu"]'],
      replace: ['null_resource.b'],
      refresh: false,
    });

    const shown = await run('jobs', 'show', plan.id);
    expect(shown.stdout).toMatch(
      /Run options: +-target=null_resource\.a -target=module\.net\["eu"\] -replace=null_resource\.b -refresh=false\n/,
    );

    const bad = await run('plan', 'web', '--target', ' ', '--detach');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--target must be a non-empty address [validation_failed]');

    // The fake agent (it says it runs run options) plans it.
    const claimed = await agent.claimJob({ features: ['run_options'] });
    expect(claimed?.job.config_snapshot.run_options?.target).toEqual(['null_resource.a', 'module.net["eu"]']);
    const bytes = new TextEncoder().encode('plan');
    await agent.uploadPlanArtifact(plan.id, bytes, bytes.byteLength);
    await agent.reportStatus(plan.id, { status: 'SUCCESS' });

    const deployed = await run('deploy', 'web', '--plan', plan.id, '--detach', '--json');
    expect(deployed.code, deployed.stderr).toBe(0);
    const deploy = JSON.parse(deployed.stdout) as Job;
    expect(deploy.config_hash).toBe(plan.config_hash);
    expect(deploy.config_snapshot.run_options).toEqual(plan.config_snapshot.run_options);
  });
});
