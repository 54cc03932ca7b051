/**
 * `trellis jobs changes`: a plan's change tree by module, with the engine's marks and the attribute
 * diffs, sensitive values masked; `--json` prints the document; a job without one says so.
 * Real binary, real server; the fake agent stores the document as the agent does.
 */
import type { TrellisClient } from '@trellis/client';
import type { PlanChanges } from '@trellis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAgent, login, runTrellis, TempHome, TestServer, userClient } from './harness.js';

let server: TestServer;
let home: TempHome;
let agent: TrellisClient;
let client: TrellisClient;

const DOCUMENT: PlanChanges = {
  format_version: 1,
  resource_changes: [
    {
      address: 'module.db.aws_db_instance.main',
      module_address: 'module.db',
      type: 'aws_db_instance',
      name: 'main',
      actions: ['update'],
      attributes: [
        { path: 'password', before: { sensitive: true }, after: { sensitive: true } },
        { path: 'port', before: { value: 5432 }, after: { value: 5433 } },
      ],
      attributes_omitted: 0,
      unchanged_attributes: 4,
    },
    {
      address: 'aws_instance.web',
      module_address: null,
      type: 'aws_instance',
      name: 'web',
      actions: ['delete', 'create'],
      action_reason: 'replace_because_cannot_update',
      attributes: [
        { path: 'ami', before: { value: 'ami-1' }, after: { value: 'ami-2' }, forces_replacement: true },
        { path: 'id', before: { value: 'i-1' }, after: { unknown: true } },
      ],
      attributes_omitted: 0,
      unchanged_attributes: 0,
    },
    {
      address: 'aws_s3_bucket.logs',
      module_address: null,
      type: 'aws_s3_bucket',
      name: 'logs',
      actions: ['create'],
      attributes: [{ path: 'bucket', after: { value: 'acme-logs' } }],
      attributes_omitted: 0,
      unchanged_attributes: 0,
    },
    {
      address: 'aws_iam_user.old',
      module_address: null,
      type: 'aws_iam_user',
      name: 'old',
      actions: ['delete'],
      attributes: [{ path: 'name', before: { value: 'old' } }],
      attributes_omitted: 0,
      unchanged_attributes: 0,
    },
  ],
  resource_changes_omitted: 3,
  output_changes: [
    {
      name: 'db_password',
      actions: ['create'],
      attributes: [{ path: 'db_password', after: { sensitive: true } }],
      attributes_omitted: 0,
    },
  ],
  output_changes_omitted: 0,
  truncated: true,
};

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

/** A PLAN run to SUCCESS by the fake agent, with its plan file and (unless null) `document`. */
async function plan(vineId: string, document: PlanChanges | null): Promise<string> {
  const job = await client.createJob({ job_type: 'PLAN', configuration_id: vineId });
  expect((await agent.claimJob())?.job.id).toBe(job.id);
  const bytes = new TextEncoder().encode('plan');
  await agent.uploadPlanArtifact(job.id, bytes, bytes.byteLength);
  if (document) await agent.uploadPlanChanges(job.id, document);
  await agent.reportStatus(job.id, { status: 'SUCCESS', execution_metadata: {} });
  return job.id;
}

describe('trellis jobs changes', () => {
  it("prints a plan's change tree by module, masked, and the document with --json", async () => {
    const vineyard = await client.createVineyard('changes-cli');
    const source = { type: 'inline' as const, files: { 'main.tf': 'output "x" { value = 1 }\n' } };
    const vine = await client.createConfiguration({ name: 'db', vineyard_id: vineyard.id, source });
    const planId = await plan(vine.id, DOCUMENT);

    const shown = await run('jobs', 'changes', planId);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toBe(
      [
        '1 to create, 1 to update, 1 to replace, 1 to destroy',
        '',
        'root module',
        '  -/+ aws_instance.web (replace, replace_because_cannot_update)',
        '        ~ ami = "ami-1" -> "ami-2" # forces replacement',
        '        ~ id = "i-1" -> (known after apply)',
        '  +   aws_s3_bucket.logs (create)',
        '        + bucket = "acme-logs"',
        '  -   aws_iam_user.old (destroy)',
        '        - name = "old" -> null',
        '',
        '  module.db',
        '    ~   module.db.aws_db_instance.main (update in place)',
        '          ~ password = (sensitive) -> (sensitive)',
        '          ~ port = 5432 -> 5433',
        '          (4 unchanged attribute(s) hidden)',
        '',
        '... 3 more changed resource(s) omitted (size limit)',
        '',
        'Outputs',
        '  +   db_password',
        '        + db_password = (sensitive)',
        '',
      ].join('\n'),
    );

    const json = await run('jobs', 'changes', planId, '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ job_id: planId, ...DOCUMENT });
  });

  it('says so when the plan has no change document', async () => {
    const vineyard = await client.createVineyard('changes-cli-old');
    const source = { type: 'inline' as const, files: { 'main.tf': 'output "x" { value = 1 }\n' } };
    const vine = await client.createConfiguration({ name: 'old', vineyard_id: vineyard.id, source });
    const planId = await plan(vine.id, null);
    const missing = await run('jobs', 'changes', planId);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('plan_changes_not_found');
    const malformed = await run('jobs', 'changes', 'not-a-uuid');
    expect(malformed.code).toBe(2);
  });
});
