/**
 * `trellis modules connect` and `trellis modules repository` (issue 28) through the real binary
 * and a real server: a manual connection prints its webhook URL and secret once, `--json` answers
 * the record, the repository is shown and disconnected; mistakes name what was typed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, runTrellis, TempHome, TestServer } from './harness.js';

let server: TestServer;
let home: TempHome;

beforeAll(async () => {
  server = await new TestServer().start(0, {
    TRELLIS_GITHUB_CLIENT_ID: 'gh-client',
    TRELLIS_GITHUB_CLIENT_SECRET: 'gh-secret',
  });
  home = new TempHome();
  await login(server, home);
});
afterAll(async () => {
  await server?.destroy();
  home?.remove();
});

const trellis = (...args: string[]) => runTrellis(args, { env: home.env() });

describe('trellis modules connect', () => {
  it('connects with a manual webhook, shows it, and disconnects it', async () => {
    const people = await trellis(
      'modules',
      'connect',
      'acme/terraform-aws-vpc',
      '--name',
      'vpc',
      '--system',
      'aws',
      '--manual',
    );
    expect(people.code).toBe(0);
    expect(people.stdout).toMatch(/u-[0-9a-f]{12}\/vpc\/aws ← github:acme\/terraform-aws-vpc \(manual webhook\)/);
    expect(people.stdout).toMatch(/URL: +http:\/\/[^ ]+\/api\/webhooks\/github\?module=[0-9a-f-]{36}/);
    expect(people.stdout).toMatch(/Secret: +[0-9a-f]{64} +\(shown only this once\)/);

    const json = await trellis('modules', 'repository', '--name', 'vpc', '--system', 'aws', '--json');
    expect(json.code).toBe(0);
    const record = JSON.parse(json.stdout);
    expect(record).toMatchObject({
      provider: 'github',
      repository: 'acme/terraform-aws-vpc',
      webhook_mode: 'manual',
      last_tag: null,
    });
    expect(record.webhook_secret).toBeUndefined();

    const again = await trellis(
      'modules',
      'connect',
      'acme/vpc-module',
      '--name',
      'vpc',
      '--system',
      'aws',
      '--manual',
      '--json',
    );
    const replaced = JSON.parse(again.stdout);
    expect(replaced).toMatchObject({ id: record.id, repository: 'acme/vpc-module' });
    expect(replaced.webhook_secret).toMatch(/^[0-9a-f]{64}$/);

    const gone = await trellis('modules', 'repository', '--name', 'vpc', '--system', 'aws', '--disconnect');
    expect(gone.code).toBe(0);
    expect(gone.stdout).toMatch(/\/vpc\/aws no longer publishes from git tags/);
    const missing = await trellis('modules', 'repository', '--name', 'vpc', '--system', 'aws');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('is not connected to a repository');
  });

  it('refuses a malformed repository, naming it', async () => {
    const refused = await trellis('modules', 'connect', 'not-a-repo', '--name', 'vpc', '--system', 'aws', '--manual');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('repository');
    expect(refused.stderr).toContain('owner/name');
  });
});
