/**
 * `trellis modules` (issue 28) through the real binary and a real server: publish a directory
 * (packed honouring `.terraformignore`), list, versions, deprecate, delete, each with `--json`; a
 * second publish of a version is refused with its code; mistakes name what was typed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packModule } from '../src/commands/modules/packModule.js';
import { fakeAgent, login, runTrellis, TempHome, TestServer, userClient } from './harness.js';

let server: TestServer;
let home: TempHome;
let workdir: string;

/** A module directory with files a `.terraformignore` keeps out. */
function moduleDir(): string {
  const dir = mkdtempSync(join(workdir, 'vpc-'));
  const write = (path: string, content: string) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  };
  write('main.tf', 'output "id" { value = "vpc" }\n');
  write('modules/subnet/main.tf', 'output "id" { value = "subnet" }\n');
  write('examples/basic/main.tf', 'module "vpc" { source = "../.." }\n');
  write('examples/basic/README.md', '# keep me\n');
  write('secrets.auto.tfvars', 'token = "x"\n');
  write('.git/config', '[core]\n');
  write('.terraform/modules/modules.json', '{}\n');
  write('.terraformignore', '# not packed\n*.tfvars\nexamples/\n!examples/basic/README.md\n');
  symlinkSync('modules/subnet', join(dir, 'subnet'));
  return dir;
}

beforeAll(async () => {
  server = await new TestServer().start();
  home = new TempHome();
  await login(server, home);
  workdir = mkdtempSync(join(tmpdir(), 'trellis-cli-modules-'));
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

describe('trellis modules', () => {
  it('packs a module directory as its .terraformignore says, files at the root, links kept', async () => {
    const packed = await packModule(moduleDir());
    try {
      const listed = execFileSync('tar', ['-tzvf', packed.file], { encoding: 'utf8' });
      const names = execFileSync('tar', ['-tzf', packed.file], { encoding: 'utf8' }).trim().split('\n').sort();
      expect(names).toEqual(['.terraformignore', 'main.tf', 'modules/subnet/main.tf', 'subnet']);
      expect(listed).toMatch(/subnet -> modules\/subnet/);
    } finally {
      packed.remove();
    }
  });

  it('publishes, lists, shows versions, deprecates and deletes, for people and with --json', async () => {
    const dir = moduleDir();
    const ns = ['--name', 'vpc', '--system', 'aws'];
    const published = JSON.parse(
      (await trellis('modules', 'publish', dir, ...ns, '--version', '1.2.0', '--json')).stdout,
    );
    expect(published).toMatchObject({ name: 'vpc', system: 'aws', version: '1.2.0', deprecated: false });
    expect(published.namespace).toMatch(/^u-[0-9a-f]{12}$/);
    const namespace = published.namespace as string;
    const people = await trellis('modules', 'publish', dir, ...ns, '--version', '1.3.0');
    expect(people.stderr).toContain(`Published ${namespace}/vpc/aws 1.3.0 (4 files,`);

    const again = await runTrellis(['modules', 'publish', dir, ...ns, '--version', '1.2.0'], { env: home.env() });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('[module_version_exists]');
    const badVersion = await runTrellis(['modules', 'publish', dir, ...ns, '--version', 'v2'], { env: home.env() });
    expect(badVersion.code).toBe(1);
    expect(badVersion.stderr).toContain('--version "v2" is not MAJOR.MINOR.PATCH[-PRERELEASE]');
    const missing = await runTrellis(['modules', 'publish', join(workdir, 'nope'), ...ns, '--version', '2.0.0'], {
      env: home.env(),
    });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain(`${join(workdir, 'nope')}: no such directory`);
    const elsewhere = await runTrellis(['modules', 'list', '--namespace', 'acme'], { env: home.env() });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain('[namespace_not_found]');

    const list = await trellis('modules', 'list');
    expect(list.stdout).toMatch(new RegExp(`${namespace}/vpc/aws +1\\.3\\.0 `));
    expect(JSON.parse((await trellis('modules', 'list', '--json')).stdout)).toEqual([
      expect.objectContaining({ namespace, name: 'vpc', system: 'aws', latest_version: '1.3.0' }),
    ]);

    const deprecated = JSON.parse(
      (await trellis('modules', 'deprecate', ...ns, '--version', '1.2.0', '--reason', 'use 1.3', '--json')).stdout,
    );
    expect(deprecated).toMatchObject({ version: '1.2.0', deprecated: true, deprecation_reason: 'use 1.3' });
    const versions = await trellis('modules', 'versions', ...ns);
    expect(versions.stdout).toMatch(/1\.3\.0 .*\n.*1\.2\.0 .* yes: use 1\.3/);
    expect(
      JSON.parse((await trellis('modules', 'versions', ...ns, '--json')).stdout).map(
        (version: { version: string }) => version.version,
      ),
    ).toEqual(['1.3.0', '1.2.0']);

    expect((await trellis('modules', 'delete', ...ns, '--version', '1.3.0')).stderr).toContain(
      `Deleted ${namespace}/vpc/aws 1.3.0`,
    );
    expect(JSON.parse((await trellis('modules', 'delete', ...ns, '--json')).stdout)).toEqual({
      module: `${namespace}/vpc/aws`,
      version: null,
      deleted: true,
    });
    expect(JSON.parse((await trellis('modules', 'list', '--json')).stdout)).toEqual([]);
  });

  it('says which vines use which version, from their last deploy (table and --json)', async () => {
    const ns = ['--name', 'dns', '--system', 'aws'];
    const { namespace } = JSON.parse(
      (await trellis('modules', 'publish', moduleDir(), ...ns, '--version', '2.0.0', '--json')).stdout,
    );
    expect((await trellis('modules', 'usage', ...ns)).stdout).toContain(
      `no vine's last plan or deploy installed ${namespace}/dns/aws`,
    );

    const client = userClient(server, home);
    const vineyard = await client.createVineyard('modules-cli');
    const source = { type: 'inline' as const, files: { 'main.tf': 'output "x" { value = 1 }\n' } };
    const vine = await client.createConfiguration({ name: 'edge', vineyard_id: vineyard.id, source });
    const job = await client.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    const agent = await fakeAgent(server, home, 'modules-agent');
    expect((await agent.claimJob())?.job.id).toBe(job.id);
    await agent.reportStatus(job.id, {
      status: 'SUCCESS',
      execution_metadata: { modules: [{ source: `trellis.example.com/${namespace}/dns/aws`, version: '2.0.0' }] },
    });

    expect((await trellis('modules', 'usage', ...ns)).stdout).toMatch(new RegExp(`edge +2\\.0\\.0 +DEPLOY ${job.id}`));
    expect(JSON.parse((await trellis('modules', 'usage', ...ns, '--json')).stdout)).toEqual([
      expect.objectContaining({ vine_id: vine.id, vine_name: 'edge', version: '2.0.0', job_id: job.id }),
    ]);
    const unknown = await runTrellis(['modules', 'usage', '--name', 'nope', '--system', 'aws'], { env: home.env() });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('[module_not_found]');
  });
});
