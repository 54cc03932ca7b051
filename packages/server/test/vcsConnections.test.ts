/**
 * Connecting a vine to a repository (issue 13) through the real control plane on SQLite and
 * Postgres, GitHub's API answered by nock: the hook is created with the server's webhook URL and
 * a fresh secret, a 403 becomes 409 `vcs_permission_missing`, a manual connect shows its secret
 * once, and disconnecting deletes the hook.
 */
import { TrellisApiError, type TrellisClient } from '@trellis/client';
import { coreServices, type SecretBox, sealProviderTokens, systemScope, type UnitOfWork } from '@trellis/core';
import { joinOrg } from '@trellis/testkit';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane, vineyardWithConfiguration } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';
import { rawRows } from './support/rawRows.js';

const TOKEN = 'gho_connecting_person_token';

describeEachDialect('connecting a vine to a repository', (dialect) => {
  let server: RunningControlPlane;
  let client: TrellisClient;
  let web: string;

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);
    server = await startControlPlane(dialect, {
      env: { TRELLIS_GITHUB_CLIENT_ID: 'github-client', TRELLIS_GITHUB_CLIENT_SECRET: 'github-secret' },
    });
    web = server.controlPlane.config.webUrl;
    client = await server.userClient('ada@example.test');
    const user = await server.controlPlane.useCases.auth.ensureUser({ email: 'ada@example.test' });
    const secrets = server.controlPlane.container.resolve<SecretBox>(coreServices.secretBox.id);
    const uow = server.controlPlane.container.resolve<UnitOfWork>(coreServices.unitOfWork.id);
    const sealed = await sealProviderTokens(
      secrets,
      { provider: 'github', provider_user_id: '583231' },
      { accessToken: TOKEN, refreshToken: null, expiresAt: null },
    );
    await uow.run(systemScope, (stores) =>
      stores.identities.upsert({
        user_id: user.id,
        provider: 'github',
        provider_user_id: '583231',
        provider_token: sealed,
        scopes: 'repo,admin:repo_hook',
      }),
    );
  });
  afterAll(async () => {
    await server?.close();
    nock.enableNetConnect();
  });
  afterEach(() => {
    nock.cleanAll();
  });

  it('auto: creates the hook with the webhook URL and a secret, makes the source the repository; DELETE removes the hook', async () => {
    const { configuration } = await vineyardWithConfiguration(client, 'auto-web');
    let sent: { config?: { url?: string; secret?: string }; events?: string[] } = {};
    const create = nock('https://api.github.com', { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .post('/repos/acme/infra/hooks', (body) => {
        sent = body;
        return true;
      })
      .reply(201, { id: 4242, type: 'Repository', active: true });
    const answer = await client.connectRepository(configuration.name, {
      provider: 'github',
      repository: 'acme/infra',
      branch: 'main',
      paths: ['infra/**'],
      path: 'envs/prod',
    });
    expect(create.isDone()).toBe(true);
    expect(sent.config?.url).toBe(`${web}/api/webhooks/github?vine=${configuration.id}`);
    expect(sent.config?.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(sent.events).toEqual(['push', 'pull_request']);
    expect(answer).toMatchObject({
      provider: 'github',
      repository: 'acme/infra',
      branch: 'main',
      paths: ['infra/**'],
      webhook_mode: 'auto',
      hook_id: '4242',
      webhook_url: `${web}/api/webhooks/github?vine=${configuration.id}`,
      pull_requests: true,
      auto_deploy: false,
    });
    expect(answer).not.toHaveProperty('webhook_secret');
    expect((await client.getConfiguration(configuration.id)).source).toEqual({
      type: 'git',
      url: 'https://github.com/acme/infra.git',
      ref: 'main',
      path: 'envs/prod',
    });
    // Stored sealed, never in the clear.
    const rows = await rawRows(server.database, 'SELECT webhook_secret_sealed FROM vcs_connections');
    expect(JSON.stringify(rows)).not.toContain(sent.config?.secret as string);

    const remove = nock('https://api.github.com', { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .delete('/repos/acme/infra/hooks/4242')
      .reply(204);
    await client.disconnectRepository(configuration.name);
    expect(remove.isDone()).toBe(true);
    const gone = await client.getRepositoryConnection(configuration.name).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(TrellisApiError);
    expect((gone as TrellisApiError).status).toBe(404);
    expect((gone as TrellisApiError).code).toBe('vcs_not_connected');
    expect((await client.getConfiguration(configuration.id)).source).toMatchObject({ type: 'git', ref: 'main' });
  });

  it('409 vcs_permission_missing when GitHub answers 403, and nothing is stored', async () => {
    const { configuration } = await vineyardWithConfiguration(client, 'forbidden-web');
    nock('https://api.github.com')
      .post('/repos/acme/infra/hooks')
      .reply(403, { message: 'Resource not accessible by integration', documentation_url: 'https://docs.github.com' });
    const error = await client
      .connectRepository(configuration.name, { provider: 'github', repository: 'acme/infra', branch: 'main' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TrellisApiError);
    expect((error as TrellisApiError).status).toBe(409);
    expect((error as TrellisApiError).code).toBe('vcs_permission_missing');
    const read = await client.getRepositoryConnection(configuration.name).catch((caught: unknown) => caught);
    expect((read as TrellisApiError).code).toBe('vcs_not_connected');
  });

  it('manual: no call to GitHub, the secret once in the PUT answer, never in GET', async () => {
    const { configuration } = await vineyardWithConfiguration(client, 'manual-web');
    const answer = await client.connectRepository(configuration.id, {
      provider: 'github',
      repository: 'acme/infra',
      branch: 'main',
      webhook: 'manual',
      auto_deploy: true,
    });
    expect(answer.webhook_secret).toMatch(/^[0-9a-f]{64}$/);
    expect(answer).toMatchObject({ webhook_mode: 'manual', hook_id: null, auto_deploy: true });
    const read = await client.getRepositoryConnection(configuration.name);
    expect(read).not.toHaveProperty('webhook_secret');
    expect(JSON.stringify(read)).not.toContain(answer.webhook_secret as string);
    expect(nock.pendingMocks()).toEqual([]);
    // A manual connection has no hook to delete: no call to GitHub (nock refuses any).
    await client.disconnectRepository(configuration.name);
  });

  it("in an organization: admins connect (the org's rows, under row-level security on Postgres), operators only read", async () => {
    const bob = await server.userClient('bob@example.test');
    const org = await client.createOrg(`platform-${dialect}`);
    await joinOrg(client, bob, org.id, 'bob@example.test', 'operator');
    const vineyard = await client.createVineyard('org-vcs', { orgId: org.id });
    const configuration = await client.createConfiguration({
      name: 'org-web',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': 'output "x" { value = 1 }\n' } },
    });
    const input = { provider: 'github' as const, repository: 'acme/org-infra', branch: 'main' };
    const refused = await bob.connectRepository(configuration.id, input).catch((caught: unknown) => caught);
    expect((refused as TrellisApiError).status).toBe(403);
    expect((refused as TrellisApiError).code).toBe('insufficient_role');

    const create = nock('https://api.github.com', { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .post('/repos/acme/org-infra/hooks')
      .reply(201, { id: 99 });
    await client.connectRepository(configuration.id, input);
    expect(create.isDone()).toBe(true);
    expect(await bob.getRepositoryConnection(configuration.id)).toMatchObject({
      repository: 'acme/org-infra',
      hook_id: '99',
    });
    const rows = await rawRows(server.database, 'SELECT owner_id FROM vcs_connections');
    expect(rows.map((row) => row.owner_id)).toContain(org.id);

    const remove = nock('https://api.github.com').delete('/repos/acme/org-infra/hooks/99').reply(204);
    await client.disconnectRepository(configuration.id);
    expect(remove.isDone()).toBe(true);
  });

  it('400 for a malformed repository or branch, 503 for a provider the server lacks', async () => {
    const { configuration } = await vineyardWithConfiguration(client, 'invalid-web');
    const bad = await client
      .connectRepository(configuration.name, {
        provider: 'github',
        repository: 'acme/infra',
        branch: '-x',
        webhook: 'manual',
      })
      .catch((caught: unknown) => caught);
    expect((bad as TrellisApiError).status).toBe(400);
    const gitlab = await client
      .connectRepository(configuration.name, { provider: 'gitlab', repository: 'acme/infra', branch: 'main' })
      .catch((caught: unknown) => caught);
    expect((gitlab as TrellisApiError).status).toBe(503);
    expect((gitlab as TrellisApiError).code).toBe('provider_not_configured');
  });
});
