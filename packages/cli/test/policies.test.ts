/**
 * `trellis policies` through the real binary and a real server that checks modules with the real
 * OPA binary: create from a file, list, show (with versions), update (a new version), delete; a
 * module that does not compile is refused with the engine's message; `trellis jobs show` lists
 * the policy results of a plan.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TrellisClient } from '@trellis/client';
import { requirePeer } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAgent, login, runTrellis, TempHome, TestServer, userClient } from './harness.js';

const OPA = requirePeer('opa', 'trellis policies CLI tests');

const MODULE = `package trellis.buckets

deny contains msg if {
  some rc in input.resource_changes
  rc.type == "aws_s3_bucket_acl"
  rc.change.after.acl == "public-read"
  msg := sprintf("%s: public-read is not allowed", [rc.address])
}
`;

let server: TestServer;
let home: TempHome;
let agent: TrellisClient;

beforeAll(async () => {
  if (!OPA) return;
  server = await new TestServer().start(0, { TRELLIS_OPA_BIN: OPA });
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

describe.skipIf(!OPA)('trellis policies', () => {
  it('create, list, show, update, delete; a module that does not compile is refused', async () => {
    const file = join(home.dir, 'buckets.rego');
    writeFileSync(file, MODULE);
    const created = await trellis(
      'policies',
      'create',
      '--name',
      'no-public-buckets',
      '--enforcement',
      'mandatory',
      '--file',
      file,
    );
    const [, id] =
      /Created mandatory policy .*no-public-buckets.* ([0-9a-f-]{36}) \(version 1\)/.exec(created.stderr) ?? [];
    expect(id, created.stderr).toBeDefined();

    const broken = join(home.dir, 'broken.rego');
    writeFileSync(broken, 'package broken\n\ndeny contains msg if {\n  msg :=\n}\n');
    const refused = await runTrellis(
      ['policies', 'create', '--name', 'broken', '--enforcement', 'advisory', '--file', broken],
      { env: home.env() },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('[policy_invalid]');
    expect(refused.stderr).toContain('rego_parse_error');

    const list = await trellis('policies', 'list');
    expect(list.stdout).toMatch(/no-public-buckets +mandatory +1 +all /);
    const listed = JSON.parse((await trellis('policies', 'list', '--json')).stdout);
    expect(listed).toEqual([expect.objectContaining({ id, name: 'no-public-buckets', version: 1 })]);

    writeFileSync(file, MODULE.replace('public-read', 'public-read-write'));
    const updated = await trellis('policies', 'update', id as string, '--file', file, '--enforcement', 'advisory');
    expect(updated.stderr).toContain('is at version 2');
    const shown = await trellis('policies', 'show', id as string);
    expect(shown.stdout).toMatch(/Enforcement: +advisory\n/);
    expect(shown.stdout).toMatch(/Versions: +v1 mandatory .*; v2 advisory /);
    expect(shown.stdout).toContain('public-read-write');
    const first = await trellis('policies', 'show', id as string, '--version', '1');
    expect(first.stdout).toBe(MODULE);
    const json = JSON.parse((await trellis('policies', 'show', id as string, '--json')).stdout);
    expect(json.versions.map((v: { version: number }) => v.version)).toEqual([1, 2]);

    const deleted = JSON.parse((await trellis('policies', 'delete', id as string, '--json')).stdout);
    expect(deleted).toEqual({ id, deleted: true });
    expect((await trellis('policies', 'list')).stderr).toContain('No policies');
  });

  it('jobs show lists the policy results of a plan', async () => {
    const client = userClient(server, home);
    const vineyard = await client.createVineyard('policy-cli');
    const vine = await client.createConfiguration({
      name: 'buckets',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': 'output "x" { value = 1 }\n' } },
    });
    const policy = await client.createPolicy({ name: 'buckets', enforcement: 'mandatory', module: MODULE });
    const plan = await client.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const claimed = await agent.claimJob();
    expect(claimed?.policies).toEqual([
      { id: policy.id, version: 1, name: 'buckets', enforcement: 'mandatory', module: MODULE },
    ]);
    await agent.reportStatus(plan.id, {
      status: 'SUCCESS',
      execution_metadata: {
        plan_summary: { add: 1, change: 0, destroy: 0 },
        policy_results: [
          {
            policy_id: policy.id,
            version: 1,
            name: 'buckets',
            enforcement: 'mandatory',
            passed: false,
            messages: ['aws_s3_bucket_acl.logs: public-read is not allowed'],
          },
          { policy_id: policy.id, version: 1, name: 'sizes', enforcement: 'advisory', passed: true, messages: [] },
        ],
      },
    });
    const shown = await trellis('jobs', 'show', plan.id);
    expect(shown.stdout).toMatch(
      /Policies:\n +FAILED +buckets v1 \(mandatory\)\n +- aws_s3_bucket_acl\.logs: public-read is not allowed\n +passed +sizes v1 \(advisory\)/,
    );
    expect(shown.stdout).not.toContain('policy_results=');
  });
});
