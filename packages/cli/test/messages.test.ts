/**
 * Messages for people (issue 25 item 7), through the real binary and server: validation errors
 * name the flag, once, with no regular expression or placeholder; outputs with their values
 * (sensitive ones masked); vineyards by name; deployment fields only where a vine has them; a
 * destroyed vine loses its drift.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrellisClient } from '@trellis/client';
import type { VineView } from '@trellis/core';
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

async function runNext(expected: string, metadata: Record<string, unknown> = {}): Promise<void> {
  const claimed = await agent.claimJob();
  expect(claimed?.job.id).toBe(expected);
  await agent.reportStatus(expected, { status: 'SUCCESS', execution_metadata: metadata });
}

/** Nothing a person should have to decode: schema wording, a pattern, a placeholder. */
const UNREADABLE = /\^\[|\{0,99\}|Too small|Too big|Invalid|expected number|body\.|#0|PLAN-JOB|\bCONFIG\b/;

describe('validation errors in the words a person typed', () => {
  it('names the flag, once, in words', async () => {
    const client = userClient(server, home);
    const vineyard = await client.createVineyard('messages-flags');
    const source = { type: 'inline' as const, files: { 'main.tf': 'output "x" { value = 1 }\n' } };
    await client.createConfiguration({ name: 'flags', vineyard_id: vineyard.id, source });

    const tooOften = await runTrellis(['configs', 'set', 'flags', '--drift-interval', '30'], { env: home.env() });
    expect(tooOften.code).toBe(1);
    expect(tooOften.stderr).toBe('Error: --drift-interval must be at least 60 minutes [validation_failed]\n');
    const tooRare = await runTrellis(['configs', 'set', 'flags', '--drift-interval', '20000'], { env: home.env() });
    expect(tooRare.stderr).toBe('Error: --drift-interval must be at most 10080 minutes (a week) [validation_failed]\n');

    const badName = await runTrellis(['vineyards', 'create', 'bad name!'], { env: home.env() });
    expect(badName.code).toBe(1);
    expect(badName.stderr).toBe(
      "Error: name must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit [validation_failed]\n",
    );
    for (const result of [tooOften, tooRare, badName]) expect(result.stderr).not.toMatch(UNREADABLE);
  });

  it('says how to write a variable, with an example rather than a placeholder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-messages-'));
    writeFileSync(join(dir, 'main.tf'), 'output "x" { value = 1 }\n');
    const result = await runTrellis(
      ['configs', 'create', 'vars', '--vineyard', 'nowhere', '--dir', dir, '--var', 'region'],
      {
        env: home.env(),
      },
    );
    rmSync(dir, { recursive: true, force: true });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--var region: give a name, '=' and the value, as in --var region=eu-west-1");
    expect(result.stderr).not.toContain('NAME=VALUE');
  });

  it('names the flags of a refused configuration, each once', async () => {
    await userClient(server, home).createVineyard('messages-create');
    const dir = mkdtempSync(join(tmpdir(), 'trellis-messages-'));
    writeFileSync(join(dir, 'main.tf'), 'output "x" { value = 1 }\n');
    const args = ['configs', 'create', 'refused', '--vineyard', 'messages-create', '--dir', dir];
    const result = await runTrellis([...args, '--var', '9lives=1', '--aws-role-arn', 'not-an-arn'], {
      env: home.env(),
    });
    rmSync(dir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "Error: the configuration is invalid (--var 9lives is not a variable name: use letters, digits, '_' and '-', starting with a letter or '_' (at most 128); --aws-role-arn must be an IAM role ARN (arn:aws:iam::123456789012:role/name)) [validation_failed]\n",
    );
  });

  it('names the flags of a refused repository connection, where API and flag names differ', async () => {
    const client = userClient(server, home);
    const vineyard = await client.createVineyard('messages-connect');
    const source = { type: 'inline' as const, files: { 'main.tf': 'output "x" { value = 1 }\n' } };
    await client.createConfiguration({ name: 'connected', vineyard_id: vineyard.id, source });
    const result = await runTrellis(
      [
        'configs',
        'connect',
        'connected',
        '--github',
        'acme/infra',
        '--branch',
        'main',
        '--path',
        '/infra/**',
        '--workdir',
        '../up',
        '--manual-webhook',
      ],
      { env: home.env() },
    );
    expect(result.code).toBe(1);
    // The API's `path` is the working directory (`--workdir`); `--path` gives its `paths`.
    expect(result.stderr).toBe(
      "Error: the repository connection is not valid (--path is relative to the repository's root: no leading '/'; --workdir must be a directory inside the repository (no '..')) [validation_failed]\n",
    );
  });

  it('shows usage with value names, not #0, for a mistyped command', async () => {
    const result = await runTrellis(['tokens', 'create', 'extra'], { env: home.env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--name NAME');
    expect(result.stderr).not.toContain('#0');
  });
});

describe('configs show after a deploy and a destroy', () => {
  it('prints outputs with their values (sensitive masked), the vineyard by name, deployment fields only when present, and drops the drift of a destroyed vine', async () => {
    const client = userClient(server, home);
    const vineyard = await client.createVineyard('messages-yard');
    const source = { type: 'inline' as const, files: { 'main.tf': 'output "x" { value = 1 }\n' } };
    const vine = await client.createConfiguration({ name: 'shown', vineyard_id: vineyard.id, source });

    const fresh = (await trellis('configs', 'show', 'shown')).stdout;
    expect(fresh).toMatch(/^Vineyard: +messages-yard$/m);
    expect(fresh).not.toContain(vineyard.id);
    expect(fresh).not.toMatch(/^(Cluster|Argo CD):/m);
    expect(fresh).toMatch(/^Outputs: +-$/m);

    const deploy = await client.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    await runNext(deploy.id, {
      outputs: {
        vpc_id: { value: 'vpc-123', type: 'string', sensitive: false },
        ports: { value: [80, 443], type: ['list', 'number'], sensitive: false },
      },
      sensitive_outputs: ['db_password'],
    });
    const deployed = (await trellis('configs', 'show', 'shown')).stdout;
    expect(deployed).toMatch(/^Outputs: +vpc_id=vpc-123, ports=\[80,443\], db_password=\(sensitive\)$/m);
    // This vine has no cluster or Argo CD: no rows for them.
    expect(deployed).not.toMatch(/^(Cluster|Argo CD):/m);
    const json = JSON.parse((await trellis('configs', 'show', 'shown', '--json')).stdout) as VineView;
    expect(json.components.outputs).toMatchObject({ values: { vpc_id: 'vpc-123' }, sensitive: ['db_password'] });

    const jobShown = (await trellis('jobs', 'show', deploy.id)).stdout;
    expect(jobShown).toMatch(/^Vineyard: +messages-yard$/m);

    const withCluster = await client.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    await runNext(withCluster.id, {
      cluster_name: 'prod-eks',
      cluster_endpoint: 'https://eks.example.test',
      argocd_url: 'https://argocd.example.test',
    });
    const full = (await trellis('configs', 'show', 'shown')).stdout;
    expect(full).toMatch(/^Cluster: +prod-eks https:\/\/eks\.example\.test$/m);
    expect(full).toMatch(/^Argo CD: +https:\/\/argocd\.example\.test$/m);

    const check = JSON.parse((await trellis('configs', 'drift-check', 'shown', '--json')).stdout) as { id: string };
    await runNext(check.id, { plan_summary: { add: 0, change: 1, destroy: 0 } });
    expect((await trellis('configs', 'show', 'shown')).stdout).toMatch(/^Drift: +drifted/m);
    expect((await trellis('configs', 'list')).stdout).toMatch(/^shown\s.*\sdrifted\s/m);

    const destroy = await client.createJob({ job_type: 'DESTROY', configuration_id: vine.id });
    await runNext(destroy.id);
    const destroyed = (await trellis('configs', 'show', 'shown')).stdout;
    expect(destroyed).toMatch(/^Status: +DESTROYED$/m);
    expect(destroyed).toMatch(/^Drift: +-$/m);
    expect(destroyed).not.toMatch(/^(Cluster|Argo CD):/m);
    expect((await trellis('configs', 'list')).stdout).toMatch(/^shown\s.*\sDESTROYED\s+-\s/m);
    expect(JSON.parse((await trellis('configs', 'show', 'shown', '--json')).stdout).drift).toBeNull();
  });
});

describe('vineyards by name', () => {
  it('policies list and show name the vineyard a policy applies to', async () => {
    const client = userClient(server, home);
    const vineyard = await client.createVineyard('messages-policies');
    const module = 'package trellis.named\n\ndeny contains msg if {\n  false\n  msg := "never"\n}\n';
    const policy = await client.createPolicy({
      name: 'yard-only',
      enforcement: 'advisory',
      module,
      vineyard_id: vineyard.id,
    });
    const listed = (await trellis('policies', 'list')).stdout;
    expect(listed).toMatch(/^yard-only\s+advisory\s+1\s+messages-policies\s/m);
    expect(listed).not.toContain(vineyard.id);
    const shown = (await trellis('policies', 'show', policy.id)).stdout;
    expect(shown).toMatch(/^Vineyard: +messages-policies$/m);
  });
});
