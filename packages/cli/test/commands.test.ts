/**
 * Every resource command's output for people (tables) and for scripts (`--json`), the real
 * binary against the real control plane.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Job, Vine, VineView, VineyardView, WorkerView } from '@trellis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAgent, login, runTrellis, TempHome, TestServer, userClient } from './harness.js';

let server: TestServer;
let home: TempHome;
let workdir: string;

beforeAll(async () => {
  server = await new TestServer().start();
  home = new TempHome();
  await login(server, home);
  workdir = mkdtempSync(join(tmpdir(), 'trellis-cli-src-'));
});
afterAll(async () => {
  await server?.destroy();
  home?.remove();
  if (workdir) rmSync(workdir, { recursive: true, force: true });
});

async function trellis(...args: string[]) {
  const result = await runTrellis(args, { env: home.env() });
  if (result.code !== 0) throw new Error(`trellis ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result;
}

async function trellisJson<T>(...args: string[]): Promise<T> {
  return JSON.parse((await trellis(...args, '--json')).stdout) as T;
}

/** Splits a table into rows of cells (columns are separated by two or more spaces). */
function rows(table: string): string[][] {
  return table
    .trimEnd()
    .split('\n')
    .map((line) => line.split(/ {2,}/));
}

describe('vineyards', () => {
  it('create, list and show, as tables and JSON', async () => {
    const created = await trellis('vineyards', 'create', 'production');
    expect(created.stderr).toContain('Created vineyard production');
    const id = created.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const staging = await trellisJson<VineyardView>('vineyards', 'create', 'staging');
    expect(staging).toMatchObject({ name: 'staging', vines: [] });

    const table = rows((await trellis('vineyards', 'list')).stdout);
    expect(table[0]).toEqual(['NAME', 'VINES', 'CREATED', 'ID']);
    expect(table.slice(1).map((row) => [row[0], row[1], row[3]])).toEqual(
      expect.arrayContaining([
        ['production', '0', id],
        ['staging', '0', staging.id],
      ]),
    );
    const listed = await trellisJson<VineyardView[]>('vineyards', 'list');
    expect(listed.map((vineyard) => vineyard.name).sort()).toEqual(['production', 'staging']);

    const byName = (await trellis('vineyards', 'show', 'production')).stdout;
    expect(byName).toMatch(
      /^Name: +production\nID: +[0-9a-f-]{36}\nCreated: +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\nVines: +0\n$/,
    );
    expect((await trellisJson<VineyardView>('vineyards', 'show', id)).name).toBe('production');
  });

  it('reports a duplicate name and an unknown vineyard in one line', async () => {
    const duplicate = await runTrellis(['vineyards', 'create', 'production'], { env: home.env() });
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toMatch(/^Error: .+ \[[a-z_]+\]\n$/);
    const missing = await runTrellis(['vineyards', 'show', 'nowhere'], { env: home.env() });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('Error: no vineyard named "nowhere" (`trellis vineyards list` shows yours)\n');
  });
});

describe('configs', () => {
  it('create from git with variables, a var file, an engine and an AWS role', async () => {
    const varFile = join(workdir, 'vars.tfvars');
    writeFileSync(varFile, '# comment\nregion = "eu-west-1"\ncount = 3\n');
    const jsonVars = join(workdir, 'vars.json');
    writeFileSync(jsonVars, JSON.stringify({ tags: { team: 'web' }, region: 'us-east-1' }));
    const vine = await trellisJson<VineView>(
      'configs',
      'create',
      'web',
      '--vineyard',
      'production',
      '--project',
      'acme-web',
      '--git',
      'https://git.example.com/acme/infra.git',
      '--ref',
      'main',
      '--path',
      'web',
      '--var-file',
      varFile,
      '--var-file',
      jsonVars,
      '-v',
      'size=large',
      '-v',
      'url=https://x.example.com/?a=b',
      '--sensitive-var',
      'db_password=s3cret',
      '--engine',
      'terraform',
      '--engine-version',
      '1.9.0',
      '--aws-role-arn',
      'arn:aws:iam::123456789012:role/trellis',
    );
    expect(vine).toMatchObject({
      name: 'web',
      project_name: 'acme-web',
      status: 'NEW',
      source: { type: 'git', url: 'https://git.example.com/acme/infra.git', ref: 'main', path: 'web' },
      engine: { name: 'terraform', version: '1.9.0' },
      cloud_identity: { provider: 'aws', role_arn: 'arn:aws:iam::123456789012:role/trellis' },
    });
    expect(vine.variables).toMatchObject({
      region: { value: 'us-east-1', sensitive: false },
      count: { value: '3', sensitive: false },
      tags: { value: '{"team":"web"}', sensitive: false },
      size: { value: 'large', sensitive: false },
      url: { value: 'https://x.example.com/?a=b', sensitive: false },
      db_password: { sensitive: true },
    });
    expect(JSON.stringify(vine)).not.toContain('s3cret');
    expect(vine.cloud_identity?.external_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('create from a local directory sends only configuration files', async () => {
    const dir = join(workdir, 'infra');
    mkdirSync(join(dir, '.terraform', 'providers'), { recursive: true });
    mkdirSync(join(dir, 'modules', 'net'), { recursive: true });
    writeFileSync(join(dir, 'main.tf'), 'resource "null_resource" "x" {}\n');
    writeFileSync(join(dir, 'vars.auto.tfvars'), 'a = "b"\n');
    writeFileSync(join(dir, 'extra.tf.json'), '{}\n');
    writeFileSync(join(dir, '.terraform.lock.hcl'), '# lock\n');
    writeFileSync(join(dir, 'modules', 'net', 'main.tf'), 'variable "cidr" {}\n');
    writeFileSync(join(dir, '.terraform', 'providers', 'x.tf'), 'nope\n');
    writeFileSync(join(dir, '.hidden.tf'), 'nope\n');
    writeFileSync(join(dir, 'terraform.tfstate'), '{}\n');
    writeFileSync(join(dir, 'terraform.tfstate.backup'), '{}\n');
    writeFileSync(join(dir, 'README.md'), '# readme\n');

    const created = await trellis('configs', 'create', 'local', '--vineyard', 'staging', '--dir', dir);
    expect(created.stderr).toContain('Created configuration local in vineyard staging');
    expect(created.stdout).toMatch(/^Name: +local$/m);
    expect(created.stdout).toMatch(/^Source: +inline \(5 files\)$/m);
    const vine = await trellisJson<VineView>('configs', 'show', 'local');
    expect(vine.source).toEqual({
      type: 'inline',
      files: {
        '.terraform.lock.hcl': '# lock\n',
        'extra.tf.json': '{}\n',
        'main.tf': 'resource "null_resource" "x" {}\n',
        'modules/net/main.tf': 'variable "cidr" {}\n',
        'vars.auto.tfvars': 'a = "b"\n',
      },
    });
    expect(vine.engine).toEqual({ name: 'tofu', version: null });
  });

  it('list and show, as tables and JSON, with sensitive values hidden', async () => {
    const table = rows((await trellis('configs', 'list')).stdout);
    expect(table[0]).toEqual([
      'NAME',
      'PROJECT',
      'VINEYARD',
      'STATUS',
      'DRIFT',
      'POLICY',
      'TAGS',
      'ENGINE',
      'SOURCE',
      'UPDATED',
    ]);
    expect(table.slice(1).map((row) => row.slice(0, 9))).toEqual(
      expect.arrayContaining([
        [
          'web',
          'acme-web',
          'production',
          'NEW',
          '-',
          '-',
          '-',
          'terraform 1.9.0',
          'git https://git.example.com/acme/infra.git@main:web',
        ],
        ['local', 'local', 'staging', 'NEW', '-', '-', '-', 'tofu', 'inline (5 files)'],
      ]),
    );
    const listed = await trellisJson<Vine[]>('configs', 'list');
    expect(listed.map((vine) => vine.name).sort()).toEqual(['local', 'web']);

    const shown = (await trellis('configs', 'show', 'web')).stdout;
    expect(shown).toMatch(/^Project: +acme-web$/m);
    expect(shown).toMatch(/^Status: +NEW$/m);
    expect(shown).toMatch(/^AWS role: +arn:aws:iam::123456789012:role\/trellis$/m);
    expect(shown).toMatch(/^Variables: +.*db_password=\(sensitive\)/m);
    expect(shown).toContain('size=large');
    expect(shown).not.toContain('s3cret');
    const byProject = await trellisJson<VineView>('configs', 'show', '--project', 'acme-web');
    expect(byProject.name).toBe('web');
    expect((await trellisJson<VineView>('configs', 'show', byProject.id)).name).toBe('web');
  });

  it('explains what the server refuses, field by field, in one line', async () => {
    const result = await runTrellis(
      ['configs', 'create', 'bad name', '--vineyard', 'production', '--git', 'https://x', '--aws-role-arn', 'nope'],
      { env: home.env() },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^Error: the configuration is invalid \(name must be 1 to 100 letters[^;]*; --aws-role-arn must be an IAM role ARN .*\) \[validation_failed\]\n$/,
    );
    const missing = await runTrellis(['configs', 'show', 'nothing-here'], { env: home.env() });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('Error: configuration not found [configuration_not_found]\n');
  });
});

describe('workers', () => {
  it('register prints the token once with a warning; list and show, as tables and JSON', async () => {
    const registered = await trellis('workers', 'register', '--name', 'build-box');
    expect(registered.stdout).toMatch(/^TRELLIS_WORKER_ID: +[0-9a-f-]{36}$/m);
    expect(registered.stdout).toMatch(/^TRELLIS_WORKER_TOKEN: +\S{20,}$/m);
    expect(registered.stdout).toMatch(new RegExp(`^TRELLIS_URL: +${server.url}$`, 'm'));
    expect(registered.stderr).toContain('This token is shown only once');
    const id = /TRELLIS_WORKER_ID: +(\S+)/.exec(registered.stdout)?.[1] as string;

    const json = await trellisJson<{ worker_id: string; worker_token: string }>(
      'workers',
      'register',
      '--name',
      'ci-box',
    );
    expect(json.worker_token.length).toBeGreaterThan(20);

    const table = rows((await trellis('workers', 'list')).stdout);
    expect(table[0]).toEqual(['NAME', 'STATUS', 'MODE', 'VERSION', 'LAST HEARTBEAT', 'ID']);
    expect(table.slice(1)).toEqual(expect.arrayContaining([['build-box', 'OFFLINE', 'self-hosted', '-', '-', id]]));
    const listed = await trellisJson<WorkerView[]>('workers', 'list');
    expect(listed.map((worker) => worker.name).sort()).toEqual(['build-box', 'ci-box']);
    expect(JSON.stringify(listed)).not.toContain('token');

    const shown = (await trellis('workers', 'show', id)).stdout;
    expect(shown).toMatch(/^Name: +build-box$/m);
    expect(shown).toMatch(/^Status: +OFFLINE$/m);
    expect((await trellisJson<WorkerView>('workers', 'show', id)).id).toBe(id);
  });
});

describe('jobs', () => {
  it('list with filters, show, logs and cancel, as tables and JSON', async () => {
    const planId = (await trellis('plan', 'web', '--detach')).stdout.trim();
    expect(planId).toMatch(/^[0-9a-f-]{36}$/);
    const destroy = await trellisJson<Job>('destroy', 'local', '--yes', '--detach');
    expect(destroy).toMatchObject({ job_type: 'DESTROY', status: 'QUEUED' });

    // An agent runs the plan and fails it, with logs on every stream.
    const agent = await fakeAgent(server, home);
    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(planId);
    await agent.appendLog(planId, 'Initializing...\n', 'STDOUT');
    await agent.appendLog(planId, 'Error: no credentials\n', 'STDERR');
    await agent.appendLog(planId, 'agent: giving up\n', 'SYSTEM');
    await agent.reportStatus(planId, { status: 'FAILED', error_message: 'tofu plan exited 1' });

    const table = rows((await trellis('jobs', 'list')).stdout);
    expect(table[0]).toEqual(['ID', 'TYPE', 'STATUS', 'CONFIG', 'TRIGGER', 'COMMIT', 'CREATED', 'DURATION']);
    expect(table.slice(1).map((row) => row.slice(0, 4))).toEqual([
      [destroy.id, 'DESTROY', 'QUEUED', 'local'],
      [planId, 'PLAN', 'FAILED', 'web'],
    ]);
    const failed = await trellisJson<Job[]>('jobs', 'list', '--status', 'FAILED');
    expect(failed.map((job) => job.id)).toEqual([planId]);
    const staging = await trellisJson<Job[]>('jobs', 'list', '--vineyard', 'staging');
    expect(staging.map((job) => job.id)).toEqual([destroy.id]);
    expect(await trellisJson<Job[]>('jobs', 'list', '--limit', '1')).toHaveLength(1);
    // One page at a time: the note names the cursor of the next (older) page.
    const firstPage = await trellis('jobs', 'list', '--limit', '1', '--json');
    expect((JSON.parse(firstPage.stdout) as Job[]).map((job) => job.id)).toEqual([destroy.id]);
    const cursor = /--cursor (\S+)/.exec(firstPage.stderr)?.[1];
    expect(cursor).toBeDefined();
    const secondPage = await trellis('jobs', 'list', '--limit', '1', '--cursor', cursor as string, '--json');
    expect((JSON.parse(secondPage.stdout) as Job[]).map((job) => job.id)).toEqual([planId]);
    expect(secondPage.stderr).not.toContain('--cursor');
    expect((await trellisJson<Job[]>('jobs', 'list', '--limit', '1', '--all')).map((job) => job.id)).toEqual([
      destroy.id,
      planId,
    ]);
    expect((await runTrellis(['jobs', 'list', '--limit', '201'], { env: home.env() })).code).not.toBe(0);

    const shown = (await trellis('jobs', 'show', planId)).stdout;
    expect(shown).toMatch(/^Type: +PLAN$/m);
    expect(shown).toMatch(/^Status: +FAILED$/m);
    expect(shown).toMatch(/^Error: +tofu plan exited 1$/m);
    expect(shown).toMatch(/^Config: +web \([0-9a-f-]{36}\)$/m);
    expect((await trellisJson<Job>('jobs', 'show', planId)).error_message).toBe('tofu plan exited 1');

    const logs = await trellis('jobs', 'logs', planId);
    expect(logs.stdout).toBe('Initializing...\nstderr| Error: no credentials\nsystem| agent: giving up\n');
    const jsonLogs = await trellisJson<{ log_chunk: string; stream_type: string }[]>('jobs', 'logs', planId);
    expect(jsonLogs.map((chunk) => chunk.stream_type)).toEqual(['STDOUT', 'STDERR', 'SYSTEM']);

    const queuedPlan = await trellisJson<Job>('plan', 'web', '--detach');
    const cancelledJson = await trellisJson<Job>('jobs', 'cancel', queuedPlan.id);
    expect(cancelledJson).toMatchObject({ id: queuedPlan.id, status: 'CANCELLED' });
    const cancelled = await trellis('jobs', 'cancel', destroy.id);
    expect(cancelled.stderr).toContain(`Job ${destroy.id} is CANCELLED`);
    const again = await runTrellis(['jobs', 'cancel', destroy.id, '--json'], { env: home.env() });
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/^Error: .+ \[invalid_transition\]\n$/);

    const notFound = await runTrellis(['jobs', 'show', '00000000-0000-4000-8000-000000000000'], { env: home.env() });
    expect(notFound.code).toBe(1);
    expect(notFound.stderr).toBe('Error: job not found [job_not_found]\n');
  });

  it('deploy --plan names the plan job, and the server explains why it cannot be applied', async () => {
    const [failed] = await userClient(server, home).listJobs({ status: 'FAILED' });
    const result = await runTrellis(['deploy', 'web', '--plan', (failed as Job).id], { env: home.env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Error: .+ \[plan_not_ready\]\n$/);
  });
});

describe('repos', () => {
  it('says clearly that the account is not linked to the provider', async () => {
    const result = await runTrellis(['repos', 'github'], { env: home.env() });
    // The harness signs in through the bootstrap link, so no GitHub identity is linked.
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'Error: your account is not linked to GitHub: sign in with GitHub in the web interface first [provider_not_linked]\n',
    );
  });
});
