/** `trellis configs connect|disconnect` and the connection in `configs show`, real binary and server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, runTrellis, TempHome, TestServer, userClient, WEB_URL } from './harness.js';

let server: TestServer;
let home: TempHome;

beforeAll(async () => {
  server = await new TestServer().start(0, {
    TRELLIS_GITHUB_CLIENT_ID: 'github-client',
    TRELLIS_GITHUB_CLIENT_SECRET: 'github-secret',
  });
  home = new TempHome();
  await login(server, home);
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

describe('connecting a configuration to a repository in the CLI', () => {
  it('manual webhook: prints the URL and the secret once; show has the connection; disconnect removes it', async () => {
    const client = userClient(server, home);
    const vineyard = await client.createVineyard('vcs-cli');
    await client.createConfiguration({
      name: 'web',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': 'output "x" { value = 1 }\n' } },
    });

    const connected = await trellis(
      'configs',
      'connect',
      'web',
      '--github',
      'acme/infra',
      '--branch',
      'main',
      '--path',
      'infra/**',
      '--path',
      'modules/**',
      '--workdir',
      'envs/prod',
      '--no-pull-requests',
      '--manual-webhook',
    );
    expect(connected.stdout).toContain('Connected web to github acme/infra (main).');
    expect(connected.stdout).toMatch(/Paths: +infra\/\*\*, modules\/\*\*\n/);
    expect(connected.stdout).toMatch(/Pull requests: +ignored\n/);
    expect(connected.stdout).toContain('the secret is shown only this once');
    const vine = await client.getConfiguration('web');
    expect(connected.stdout).toMatch(new RegExp(`Payload URL: +${WEB_URL}/api/webhooks/github\\?vine=${vine.id}\\n`));
    const [, secret] = /Secret: +([0-9a-f]{64})\n/.exec(connected.stdout) ?? [];
    expect(secret).toBeDefined();

    const shown = await trellis('configs', 'show', 'web');
    expect(shown.stdout).toMatch(/Source: .*acme\/infra/);
    expect(shown.stdout).toContain('Connected repository');
    expect(shown.stdout).toMatch(/Repository: +github acme\/infra\n/);
    expect(shown.stdout).toMatch(/Webhook: +manual/);
    expect(shown.stdout).not.toContain(secret as string);
    const json = JSON.parse((await trellis('configs', 'show', 'web', '--json')).stdout);
    expect(json.source).toEqual({
      type: 'git',
      url: 'https://github.com/acme/infra.git',
      ref: 'main',
      path: 'envs/prod',
    });
    expect(json.vcs).toMatchObject({
      provider: 'github',
      repository: 'acme/infra',
      branch: 'main',
      paths: ['infra/**', 'modules/**'],
      pull_requests: false,
      webhook_mode: 'manual',
    });
    expect(JSON.stringify(json)).not.toContain(secret as string);

    const again = JSON.parse(
      (
        await trellis(
          'configs',
          'connect',
          'web',
          '--github',
          'acme/infra',
          '--branch',
          'release',
          '--manual-webhook',
          '--json',
        )
      ).stdout,
    );
    expect(again).toMatchObject({ branch: 'release', webhook_mode: 'manual', pull_requests: true });
    expect(again.webhook_secret).toMatch(/^[0-9a-f]{64}$/);
    expect(again.webhook_secret).not.toBe(secret);

    const disconnected = await trellis('configs', 'disconnect', 'web');
    expect(disconnected.stdout).toContain('Disconnected web from its repository.');
    expect(JSON.parse((await trellis('configs', 'show', 'web', '--json')).stdout).vcs).toBeNull();
    const twice = await runTrellis(['configs', 'disconnect', 'web'], { env: home.env() });
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('[vcs_not_connected]');
  });

  it('--fork-pull-requests sets what pull requests from forks do; off by default; a wrong mode is a usage error', async () => {
    const client = userClient(server, home);
    const vineyard = await client.createVineyard('vcs-cli-forks');
    await client.createConfiguration({
      name: 'forked',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': 'output "x" { value = 1 }\n' } },
    });
    const base = ['configs', 'connect', 'forked', '--github', 'acme/infra', '--branch', 'main', '--manual-webhook'];
    const withheld = await trellis(...base, '--fork-pull-requests', 'without_secrets');
    expect(withheld.stdout).toMatch(/Fork pull requests: +planned without secrets\n/);
    expect((await client.getRepositoryConnection('forked')).fork_pull_requests).toBe('without_secrets');
    const shown = JSON.parse((await trellis('configs', 'show', 'forked', '--json')).stdout);
    expect(shown.vcs).toMatchObject({ fork_pull_requests: 'without_secrets' });
    const json = JSON.parse((await trellis(...base, '--json')).stdout);
    expect(json.fork_pull_requests).toBe('off');
    expect((await trellis('configs', 'show', 'forked')).stdout).toMatch(/Fork pull requests: +not planned/);
    expect((await trellis('configs', 'show', 'forked')).stdout).toMatch(/Status: +connected\n/);
    expect(json.status).toBe('connected');
    const wrong = await runTrellis([...base, '--fork-pull-requests', 'always'], { env: home.env() });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout + wrong.stderr).toContain('--fork-pull-requests');
    expect((await client.getRepositoryConnection('forked')).fork_pull_requests).toBe('off');
  });

  it('explains a refused connect: not linked to GitHub, two providers, a provider the server lacks', async () => {
    const client = userClient(server, home);
    const vineyard = await client.createVineyard('vcs-cli-errors');
    await client.createConfiguration({
      name: 'api',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': 'output "x" { value = 1 }\n' } },
    });
    const notLinked = await runTrellis(['configs', 'connect', 'api', '--github', 'acme/infra', '--branch', 'main'], {
      env: home.env(),
    });
    expect(notLinked.code).toBe(1);
    expect(notLinked.stderr).toContain('[provider_not_linked]');
    const both = await runTrellis(
      ['configs', 'connect', 'api', '--github', 'a/b', '--gitlab', 'a/b', '--branch', 'main'],
      { env: home.env() },
    );
    expect(both.code).not.toBe(0);
    expect(both.stderr + both.stdout).toContain('exactly one of --github, --gitlab or --bitbucket');
    const gitlab = await runTrellis(['configs', 'connect', 'api', '--gitlab', 'a/b/c', '--branch', 'main'], {
      env: home.env(),
    });
    expect(gitlab.code).not.toBe(0);
    expect(gitlab.stderr).toContain('[provider_not_configured]');
  });
});
