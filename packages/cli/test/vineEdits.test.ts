/**
 * Changing and deleting configurations and vineyards (issue 25): `trellis configs update|delete`
 * and `trellis vineyards rename|delete`, the real binary against the real server on SQLite and
 * Postgres, with a fake agent running the jobs and writing state through the http backend.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrellisClient } from '@trellis/client';
import type { VineView } from '@trellis/core';
import {
  checkTestPostgres,
  createTestDatabase,
  describeOnEachDialect,
  type TestDatabase,
  testPostgresPoolSize,
} from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { login, runTrellis, TempHome, TestServer, userClient } from './harness.js';

const postgres = await checkTestPostgres();

const STATE_WITH_A_BUCKET = `${JSON.stringify({
  version: 4,
  terraform_version: '1.9.0',
  serial: 1,
  lineage: 'lineage-edit',
  outputs: {},
  resources: [
    { mode: 'data', type: 'aws_caller_identity', name: 'me', provider: 'p', instances: [{ attributes: {} }] },
    { mode: 'managed', type: 'aws_s3_bucket', name: 'b', provider: 'p', instances: [{ attributes: { id: 'b' } }] },
  ],
})}\n`;

describeOnEachDialect('changing and deleting configurations in the CLI', postgres, (dialect) => {
  let database: TestDatabase;
  let server: TestServer;
  let home: TempHome;
  let client: TrellisClient;
  let agent: TrellisClient;
  let workerAuth: string;
  let dirs: string;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    server = await new TestServer().start(0, {
      DATABASE_URL: database.url,
      TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()),
    });
    home = new TempHome();
    await login(server, home);
    client = userClient(server, home);
    const { worker_id, worker_token } = await client.registerAgent({ name: 'edit-agent' });
    workerAuth = `Basic ${Buffer.from(`${worker_id}:${worker_token}`).toString('base64')}`;
    agent = new TrellisClient({
      baseUrl: server.url,
      auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
    });
    dirs = mkdtempSync(join(tmpdir(), 'trellis-edit-'));
  }, 90_000);
  afterAll(async () => {
    await server?.destroy();
    await database?.drop();
    home?.remove();
    if (dirs) rmSync(dirs, { recursive: true, force: true });
  });

  const run = (args: string[], input?: string) =>
    runTrellis(args, { env: home.env(), ...(input === undefined ? {} : { input }) });
  async function trellis(...args: string[]) {
    const result = await run(args);
    if (result.code !== 0) throw new Error(`trellis ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return result;
  }

  function infraDir(name: string, files: Record<string, string>): string {
    const dir = join(dirs, name);
    mkdirSync(dir, { recursive: true });
    for (const [file, content] of Object.entries(files)) writeFileSync(join(dir, file), content);
    return dir;
  }

  /** A PLAN of the vine run to SUCCESS by the fake agent, with its artifact. */
  async function plan(vineId: string): Promise<string> {
    const job = await client.createJob({ job_type: 'PLAN', configuration_id: vineId });
    expect((await agent.claimJob())?.job.id).toBe(job.id);
    const bytes = new TextEncoder().encode('plan');
    await agent.uploadPlanArtifact(job.id, bytes, bytes.byteLength);
    await agent.reportStatus(job.id, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 } },
    });
    return job.id;
  }

  it('updates only what is given, keeps sensitive values write-only, and makes earlier plans stale', async () => {
    await trellis('vineyards', 'create', 'edit-yard');
    const v1 = infraDir('v1', { 'main.tf': 'variable "region" {}\nvariable "token" {}\n' });
    await trellis(
      'configs',
      'create',
      'web',
      '--vineyard',
      'edit-yard',
      '--dir',
      v1,
      '-v',
      'region=eu-west-1',
      '-v',
      'legacy=1',
      '--sensitive-var',
      'token=s3cret',
    );
    const before = await client.getConfiguration('web');
    const planId = await plan(before.id);

    const v2 = infraDir('v2', {
      'main.tf': 'variable "region" {}\nvariable "token" {}\noutput "r" { value = var.region }\n',
    });
    const updated = await trellis(
      'configs',
      'update',
      'web',
      '--dir',
      v2,
      '-v',
      'region=us-east-1',
      '--unset-var',
      'legacy',
    );
    expect(updated.stderr).toContain('Updated configuration web (source, variables)');
    expect(updated.stdout).toContain(
      'Plans made before this change are stale: run `trellis plan web` before you deploy.',
    );
    expect(updated.stdout).toMatch(
      /Variables: +(region=us-east-1, token=\(sensitive\)|token=\(sensitive\), region=us-east-1)\n/,
    );

    const after = (await client.getConfiguration('web')) as VineView;
    expect(after.source).toEqual({ type: 'inline', files: { 'main.tf': expect.stringContaining('output "r"') } });
    expect(after.variables).toEqual({
      region: { value: 'us-east-1', sensitive: false },
      token: { value: '***', sensitive: true },
    });

    // The plan made before the change is refused, through the CLI and over HTTP.
    const stale = await run(['deploy', 'web', '--plan', planId, '--detach']);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('[plan_stale]');
    await expect(
      client.createJob({ job_type: 'DEPLOY', configuration_id: after.id, plan_job_id: planId }),
    ).rejects.toMatchObject({
      status: 409,
      code: 'plan_stale',
    });

    // A new value for a sensitive variable stays sensitive; the value is never answered.
    const secret = JSON.parse(
      (await trellis('configs', 'update', 'web', '-v', 'token=rotated', '--json')).stdout,
    ) as VineView;
    expect(secret.variables.token).toEqual({ value: '***', sensitive: true });
    expect(JSON.stringify(secret)).not.toContain('rotated');

    // Engine, then a rename: the old name is gone, the new one answers.
    const engine = JSON.parse(
      (await trellis('configs', 'update', 'web', '--engine', 'terraform', '--engine-version', '1.9.8', '--json'))
        .stdout,
    ) as VineView;
    expect(engine.engine).toEqual({ name: 'terraform', version: '1.9.8' });
    const role = 'arn:aws:iam::123456789012:role/deploy';
    const withRole = JSON.parse(
      (await trellis('configs', 'update', 'web', '--aws-oidc-role', role, '--json')).stdout,
    ) as VineView;
    expect(withRole.cloud_identity).toMatchObject({ kind: 'oidc', provider: 'aws', role_arn: role });
    const withoutRole = JSON.parse(
      (await trellis('configs', 'update', 'web', '--cloud-identity', 'none', '--json')).stdout,
    ) as VineView;
    expect(withoutRole).toMatchObject({ cloud_identity_id: null, cloud_identity: null });
    const renamed = JSON.parse(
      (await trellis('configs', 'update', 'web', '--rename', 'web-eu', '--json')).stdout,
    ) as VineView;
    expect(renamed).toMatchObject({ id: after.id, name: 'web-eu' });
    const gone = await run(['configs', 'show', 'web']);
    expect(gone.code).toBe(1);
  });

  it('says which flag was wrong, in the terms typed', async () => {
    const badVar = await run(['configs', 'update', 'web-eu', '-v', 'not a name=1']);
    expect(badVar.code).toBe(1);
    expect(badVar.stderr).toContain('--var not a name is not a variable name');
    expect(badVar.stderr).toContain('[validation_failed]');
    expect(badVar.stderr).not.toContain('variables.');
    const unsetMissing = await run(['configs', 'update', 'web-eu', '--unset-var', 'nope']);
    expect(unsetMissing.code).toBe(1);
    expect(unsetMissing.stderr).toContain('--var nope is not set, so it cannot be unset');
    const badName = await run(['configs', 'update', 'web-eu', '--rename', 'Bad Name!']);
    expect(badName.code).toBe(1);
    expect(badName.stderr).toMatch(/--rename .+\[validation_failed\]/);
    expect(badName.stderr).not.toMatch(/\bname\b.*\bname\b.*\bname\b/);
    const badRole = await run(['configs', 'update', 'web-eu', '--aws-role-arn', 'not-an-arn']);
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toContain('--aws-role-arn must be an IAM role ARN');
    const both = await run(['configs', 'update', 'web-eu', '--cloud-identity', 'none', '--aws-role-arn', 'x']);
    expect(both.code).toBe(2);
    const nothing = await run(['configs', 'update', 'web-eu']);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('nothing to change');
    const versionAlone = await run(['configs', 'update', 'web-eu', '--engine-version', '1.9.8']);
    expect(versionAlone.code).toBe(2);
    const missing = await run(['configs', 'update', 'nosuch', '-v', 'a=1']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no configuration named "nosuch"');

    // Over HTTP: problem+json with the field.
    const response = await fetch(`${server.url}/api/cli/configurations/web-eu`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${home.readAuth().access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        engine: { name: 'tofu', version: 'not a version' },
        source: { type: 'inline', files: {} },
      }),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await response.json()) as { code: string; errors: { path: string }[] };
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors.map((issue) => issue.path).sort()).toEqual(['engine.version', 'source.files']);
  });

  it('sets the execution mode with --execution-mode; configs show prints it; a bad value is named', async () => {
    const shown = (await trellis('configs', 'show', 'web-eu')).stdout;
    expect(shown).toMatch(/Execution:\s+remote \(the stock CLI runs on the agents\)/);
    const local = await trellis('configs', 'update', 'web-eu', '--execution-mode', 'local');
    expect(local.stderr).toContain('Updated configuration web-eu (execution mode)');
    expect(local.stderr).not.toContain('stale');
    expect(local.stdout).toMatch(/Execution:\s+local \(the stock CLI runs tofu on its own machine; state in Trellis\)/);
    expect((JSON.parse((await trellis('configs', 'show', 'web-eu', '--json')).stdout) as VineView).execution_mode).toBe(
      'local',
    );
    const remote = JSON.parse(
      (await trellis('configs', 'update', 'web-eu', '--execution-mode', 'remote', '--json')).stdout,
    ) as VineView;
    expect(remote.execution_mode).toBe('remote');

    const bad = await run(['configs', 'update', 'web-eu', '--execution-mode', 'agent']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--execution-mode must be one of remote, local (got "agent")');
    expect((await client.getConfiguration('web-eu')).execution_mode).toBe('remote');
  });

  it('refuses to delete a configuration that manages resources or runs a job; --force deletes it', async () => {
    const vine = await client.getConfiguration('web-eu');
    const deployPlan = await plan(vine.id);
    const deploy = await client.createJob({ job_type: 'DEPLOY', configuration_id: vine.id, plan_job_id: deployPlan });
    expect((await agent.claimJob())?.job.id).toBe(deploy.id);
    const written = await fetch(`${server.url}/api/state/${vine.id}`, {
      method: 'POST',
      headers: { authorization: workerAuth, 'content-type': 'application/json' },
      body: STATE_WITH_A_BUCKET,
    });
    expect(written.status).toBe(200);
    await agent.reportStatus(deploy.id, { status: 'SUCCESS', execution_metadata: {} });

    const notAtTerminal = await run(['configs', 'delete', 'web-eu']);
    expect(notAtTerminal.code).toBe(2);
    expect(notAtTerminal.stderr).toContain('pass --yes when not at a terminal');

    const managed = await run(['configs', 'delete', 'web-eu', '--yes']);
    expect(managed.code).toBe(1);
    expect(managed.stderr).toContain('configuration web-eu still manages 1 resource');
    expect(managed.stderr).toContain('run `trellis destroy web-eu` first, or `trellis configs delete web-eu --force`');
    expect(managed.stderr).toContain('[vine_has_resources]');

    const queued = await client.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const busy = await run(['configs', 'delete', 'web-eu', '--yes', '--force']);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain(`has a queued or running job (${queued.id})`);
    expect(busy.stderr).toContain('[configuration_busy]');
    await client.cancelJob(queued.id);

    const deleted = JSON.parse((await trellis('configs', 'delete', 'web-eu', '--yes', '--force', '--json')).stdout);
    expect(deleted).toMatchObject({ id: vine.id, name: 'web-eu', deleted: true });
    const keptDays = (Date.parse(deleted.state_kept_until) - Date.now()) / 86_400_000;
    expect(keptDays).toBeGreaterThan(29.9);
    expect(keptDays).toBeLessThanOrEqual(30);

    expect((await trellis('configs', 'list')).stdout).not.toContain('web-eu');
    expect((await run(['configs', 'show', 'web-eu'])).code).toBe(1);
    // The job history stays; the name is free again.
    expect((await client.getJob(deploy.id)).status).toBe('SUCCESS');
    const v3 = infraDir('v3', { 'main.tf': 'output "x" { value = 1 }\n' });
    await trellis('configs', 'create', 'web-eu', '--vineyard', 'edit-yard', '--dir', v3);
  });

  it('deletes a configuration that deployed nothing, with --yes when not at a terminal', async () => {
    const plain = await run(['configs', 'delete', 'web-eu', '--yes']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toContain('Deleted configuration web-eu');
    expect(plain.stdout).toMatch(/Its state versions are kept until \d{4}-\d\d-\d\dT/);
  });

  it('renames and deletes vineyards, only empty ones, and audits every change', async () => {
    await trellis('configs', 'create', 'db', '--vineyard', 'edit-yard', '--dir', join(dirs, 'v3'));
    const full = await run(['vineyards', 'delete', 'edit-yard']);
    expect(full.code).toBe(1);
    expect(full.stderr).toContain('vineyard edit-yard still holds 1 configuration (db)');
    expect(full.stderr).toContain('[vineyard_not_empty]');

    const renamed = await trellis('vineyards', 'rename', 'edit-yard', 'prod-yard');
    expect(renamed.stderr).toContain('Renamed vineyard edit-yard to prod-yard');
    expect((await client.getConfiguration('db')).vineyard_id).toBe((await client.listVineyards())[0]?.id);
    await trellis('vineyards', 'create', 'other-yard');
    const taken = await run(['vineyards', 'rename', 'other-yard', 'prod-yard']);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('[vineyard_name_taken]');
    const unknown = await run(['vineyards', 'rename', 'edit-yard', 'x']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no vineyard named "edit-yard"');

    await trellis('configs', 'delete', 'db', '--yes');
    const gone = JSON.parse((await trellis('vineyards', 'delete', 'prod-yard', '--json')).stdout);
    expect(gone).toMatchObject({ name: 'prod-yard', deleted: true });
    expect((await trellis('vineyards', 'list')).stdout).not.toContain('prod-yard');
    await trellis('vineyards', 'create', 'prod-yard');

    const actions = [];
    for await (const entry of client.auditEntries()) actions.push(entry.action);
    for (const action of ['vine.update', 'vine.delete', 'vineyard.update', 'vineyard.delete']) {
      expect(actions).toContain(action);
    }
  });
});
