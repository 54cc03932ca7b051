import {
  ConflictError,
  type GitProvider,
  identityTokenContext,
  InsufficientRoleError,
  NotFoundError,
  openWebhookSecret,
  systemScope,
  UnavailableError,
  ValidationError,
  type VcsPort,
} from '@trellis/core';
import {
  addAcceptedMember,
  createTestCore,
  FakeRepositoryLister,
  RecordingVcsApi,
  seedUser,
  seedVine,
  type TestCore,
  type TestUser,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from '../usecases/helpers.js';

let core: TestCore;
let api: RecordingVcsApi;
let ada: TestUser;
let bob: TestUser;

const port = (): VcsPort => ({
  api,
  webhooks: { parse: () => null, verify: () => false },
  cloneUrl: (repository) => `https://github.example/${repository}.git`,
});

async function link(user: TestUser, token: string, provider: GitProvider = 'github'): Promise<void> {
  const sealed = await core.secrets.seal(token, identityTokenContext(provider, `p-${user.userId}`));
  await core.uow.run(systemScope, (stores) =>
    stores.identities.upsert({
      user_id: user.userId,
      provider,
      provider_user_id: `p-${user.userId}`,
      provider_token: sealed,
      scopes: '',
    }),
  );
}

beforeEach(async () => {
  api = new RecordingVcsApi();
  core = createTestCore({
    providers: { signIn: {}, repositories: { github: new FakeRepositoryLister() } },
    vcs: { github: port() },
    settings: { notifications: { ...createTestCore().settings.notifications, webUrl: 'https://trellis.example' } },
  });
  ada = await seedUser(core, { email: 'ada@example.test' });
  bob = await seedUser(core, { email: 'bob@example.test' });
});

const stored = (vine: { owner_id: string; id: string }) =>
  core.uow.run(systemScope, (stores) => stores.vcs.get(vine.owner_id, vine.id));

describe('connecting a vine to a repository', () => {
  it('creates a hook with a fresh secret (auto), stores it sealed and makes the source the repository', async () => {
    await link(ada, 'gho_ada');
    const vine = await seedVine(core, ada, { name: 'web' });
    const answer = await core.useCases.vcs.connect(ada, 'web', {
      provider: 'github',
      repository: 'acme/infra',
      branch: 'main',
      paths: ['infra/**', 'modules/*.tf'],
      path: 'envs/prod',
    });
    expect(answer).toMatchObject({
      vine_id: vine.id,
      provider: 'github',
      repository: 'acme/infra',
      branch: 'main',
      paths: ['infra/**', 'modules/*.tf'],
      auto_deploy: false,
      pull_requests: true,
      webhook_mode: 'auto',
      webhook_url: `https://trellis.example/api/webhooks/github?vine=${vine.id}`,
      hook_id: 'hook-1',
      connected_by: ada.userId,
    });
    expect(answer).not.toHaveProperty('webhook_secret');
    expect(api.calls).toHaveLength(1);
    const call = api.calls[0] as Extract<(typeof api.calls)[number], { method: 'createHook' }>;
    expect(call).toMatchObject({ method: 'createHook', token: 'gho_ada', repository: 'acme/infra' });
    expect(call.hook.url).toBe(`https://trellis.example/api/webhooks/github?vine=${vine.id}`);
    expect(call.hook.secret).toMatch(/^[0-9a-f]{64}$/);
    const connection = await stored(vine);
    expect(connection?.webhook_secret_sealed).not.toContain(call.hook.secret);
    expect(await openWebhookSecret(core.secrets, connection as NonNullable<typeof connection>)).toBe(call.hook.secret);
    expect((await core.useCases.vines.get(ada, vine.id)).source).toEqual({
      type: 'git',
      url: 'https://github.example/acme/infra.git',
      ref: 'main',
      path: 'envs/prod',
    });
    const audit = await core.useCases.audit.list(ada, {});
    expect(audit.items.map((entry) => entry.action)).toContain('vcs.connect');
    expect(JSON.stringify(audit)).not.toContain(call.hook.secret);
  });

  it('manual mode: no hook, the secret in the answer once, never in get', async () => {
    const vine = await seedVine(core, ada, { name: 'web' });
    const answer = await core.useCases.vcs.connect(ada, vine.id, {
      provider: 'github',
      repository: 'acme/infra',
      branch: 'main',
      webhook: 'manual',
      auto_deploy: true,
      pull_requests: false,
    });
    expect(api.calls).toEqual([]);
    expect(answer.webhook_secret).toMatch(/^[0-9a-f]{64}$/);
    expect(answer).toMatchObject({ webhook_mode: 'manual', hook_id: null, auto_deploy: true, pull_requests: false });
    const read = await core.useCases.vcs.get(ada, 'web');
    expect(read).not.toHaveProperty('webhook_secret');
    expect(JSON.stringify(read)).not.toContain(answer.webhook_secret as string);
    const connection = await stored(vine);
    expect(await openWebhookSecret(core.secrets, connection as NonNullable<typeof connection>)).toBe(
      answer.webhook_secret,
    );
  });

  it('keeps the vine’s current git path when path is absent', async () => {
    await link(ada, 'gho_ada');
    await seedVine(core, ada, {
      name: 'web',
      source: { type: 'git', url: 'https://github.example/old/repo.git', ref: 'dev', path: 'stacks/web' },
    });
    await core.useCases.vcs.connect(ada, 'web', { provider: 'github', repository: 'acme/infra', branch: 'main' });
    expect((await core.useCases.vines.get(ada, 'web')).source).toMatchObject({ ref: 'main', path: 'stacks/web' });
  });

  it('reconnecting replaces the hook: the old one is deleted first, then a new one made with a new secret', async () => {
    await link(ada, 'gho_ada');
    const vine = await seedVine(core, ada, { name: 'web' });
    await core.useCases.vcs.connect(ada, 'web', { provider: 'github', repository: 'acme/infra', branch: 'main' });
    const answer = await core.useCases.vcs.connect(ada, 'web', {
      provider: 'github',
      repository: 'acme/infra',
      branch: 'release',
    });
    expect(api.calls.map((call) => call.method)).toEqual(['createHook', 'deleteHook', 'createHook']);
    expect(api.calls[1]).toMatchObject({ hook_id: 'hook-1', repository: 'acme/infra' });
    const secrets = api.calls.flatMap((call) => (call.method === 'createHook' ? [call.hook.secret] : []));
    expect(secrets[0]).not.toBe(secrets[1]);
    expect(answer).toMatchObject({ hook_id: 'hook-2', branch: 'release' });
    expect((await stored(vine))?.hook_id).toBe('hook-2');
  });

  it('moving to another provider deletes the old hook at the old provider, with the token there', async () => {
    await link(ada, 'gho_ada');
    const gitlabApi = new RecordingVcsApi();
    core.deps.vcs.gitlab = {
      ...port(),
      api: gitlabApi,
      cloneUrl: (repository) => `https://gitlab.example/${repository}.git`,
    };
    await seedVine(core, ada, { name: 'web' });
    await core.useCases.vcs.connect(ada, 'web', { provider: 'github', repository: 'acme/infra', branch: 'main' });
    const moved = await core.useCases.vcs.connect(ada, 'web', {
      provider: 'gitlab',
      repository: 'acme/platform/infra',
      branch: 'main',
      webhook: 'manual',
    });
    expect(api.calls.map((call) => call.method)).toEqual(['createHook', 'deleteHook']);
    expect(api.calls[1]).toMatchObject({ token: 'gho_ada', repository: 'acme/infra', hook_id: 'hook-1' });
    expect(gitlabApi.calls).toEqual([]);
    expect(moved).toMatchObject({ provider: 'gitlab', hook_id: null, webhook_mode: 'manual' });
  });

  it('409s vcs_permission_missing from the provider and stores nothing', async () => {
    await link(ada, 'gho_ada');
    const vine = await seedVine(core, ada, { name: 'web' });
    api.fail.createHook = new ConflictError(
      'vcs_permission_missing',
      'grant admin:repo_hook, or connect with a manual webhook',
    );
    await expectFailure(
      core.useCases.vcs.connect(ada, 'web', { provider: 'github', repository: 'acme/infra', branch: 'main' }),
      ConflictError,
      'vcs_permission_missing',
    );
    expect(await stored(vine)).toBeNull();
    expect((await core.useCases.vines.get(ada, 'web')).source.type).toBe('inline');
  });

  it('409s provider_not_linked (auto mode) and 503s a provider the server lacks', async () => {
    await seedVine(core, ada, { name: 'web' });
    await expectFailure(
      core.useCases.vcs.connect(ada, 'web', { provider: 'github', repository: 'acme/infra', branch: 'main' }),
      ConflictError,
      'provider_not_linked',
    );
    await expectFailure(
      core.useCases.vcs.connect(ada, 'web', { provider: 'gitlab', repository: 'acme/infra', branch: 'main' }),
      UnavailableError,
      'provider_not_configured',
    );
  });

  it('refuses malformed input, naming each field', async () => {
    await seedVine(core, ada, { name: 'web' });
    const error = await expectFailure(
      core.useCases.vcs.connect(ada, 'web', {
        provider: 'svn',
        repository: 'no-slash',
        branch: 'bad..ref',
        paths: ['/abs', 'ok/**', 'a[b'],
        webhook: 'sometimes',
        pull_requests: 'yes',
      }),
      ValidationError,
      'validation_failed',
    );
    expect(error.fields.map((issue) => issue.path).sort()).toEqual(
      ['paths[0]', 'paths[2]', 'provider', 'pull_requests', 'webhook'].sort(),
    );
    const badRef = await expectFailure(
      core.useCases.vcs.connect(ada, 'web', {
        provider: 'github',
        repository: 'a/b',
        branch: 'bad..ref',
        webhook: 'manual',
      }),
      ValidationError,
      'validation_failed',
    );
    expect(badRef.fields.map((issue) => issue.path)).toEqual(['branch']);
    await expectFailure(
      core.useCases.vcs.connect(ada, 'web', { provider: 'github', repository: 'a/b/c', branch: 'main' }),
      ValidationError,
      'validation_failed',
    );
    await expectFailure(
      core.useCases.vcs.connect(ada, 'web', {
        provider: 'github',
        repository: 'a/b',
        branch: 'main',
        paths: Array.from({ length: 51 }, (_, index) => `p${index}/**`),
      }),
      ValidationError,
      'validation_failed',
    );
  });

  it('accepts GitLab’s nested groups', async () => {
    const gitlabApi = new RecordingVcsApi();
    core.deps.vcs.gitlab = {
      ...port(),
      api: gitlabApi,
      cloneUrl: (repository) => `https://gitlab.example/${repository}.git`,
    };
    await seedVine(core, ada, { name: 'web' });
    const answer = await core.useCases.vcs.connect(ada, 'web', {
      provider: 'gitlab',
      repository: 'acme/platform/infra',
      branch: 'main',
      webhook: 'manual',
    });
    expect(answer.repository).toBe('acme/platform/infra');
    expect((await core.useCases.vines.get(ada, 'web')).source).toMatchObject({
      url: 'https://gitlab.example/acme/platform/infra.git',
    });
  });
});

describe('who may connect', () => {
  it('in an organization: admins connect, operators and viewers read', async () => {
    await link(ada, 'gho_ada');
    await link(bob, 'gho_bob');
    const org = await core.useCases.orgs.create(ada, { name: 'platform' });
    await addAcceptedMember(core.useCases, ada, org.id, bob, 'operator');
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod', org_id: org.id });
    const vine = await seedVine(core, ada, { name: 'web', vineyard_id: vineyard.id });
    const input = { provider: 'github', repository: 'acme/infra', branch: 'main' };
    await expectFailure(core.useCases.vcs.connect(bob, vine.id, input), InsufficientRoleError, 'insufficient_role');
    await core.useCases.vcs.connect(ada, vine.id, input);
    expect((await core.useCases.vcs.get(bob, vine.id)).connected_by).toBe(ada.userId);
    await expectFailure(core.useCases.vcs.disconnect(bob, vine.id), InsufficientRoleError, 'insufficient_role');
    const cy = await seedUser(core, { email: 'cy@example.test' });
    const member = { id: await addAcceptedMember(core.useCases, ada, org.id, cy, 'admin') };
    await link(cy, 'gho_cy');
    await core.useCases.vcs.connect(cy, vine.id, { ...input, branch: 'release' });
    expect(api.calls.filter((call) => call.method === 'deleteHook')).toEqual([
      { method: 'deleteHook', token: 'gho_cy', repository: 'acme/infra', hook_id: 'hook-1' },
    ]);
    expect(member.id).toEqual(expect.any(String));
  });

  it('404s a vine of someone else', async () => {
    await seedVine(core, ada, { name: 'web' });
    await expectFailure(core.useCases.vcs.get(bob, 'web'), NotFoundError, 'configuration_not_found');
    await expectFailure(
      core.useCases.vcs.connect(bob, 'web', {
        provider: 'github',
        repository: 'a/b',
        branch: 'main',
        webhook: 'manual',
      }),
      NotFoundError,
      'configuration_not_found',
    );
  });
});

describe('disconnecting', () => {
  it('deletes the hook it created and the connection, and leaves the source', async () => {
    await link(ada, 'gho_ada');
    const vine = await seedVine(core, ada, { name: 'web' });
    await core.useCases.vcs.connect(ada, 'web', { provider: 'github', repository: 'acme/infra', branch: 'main' });
    await core.useCases.vcs.disconnect(ada, 'web');
    expect(api.calls.map((call) => call.method)).toEqual(['createHook', 'deleteHook']);
    expect(api.calls[1]).toMatchObject({ token: 'gho_ada', hook_id: 'hook-1' });
    expect(await stored(vine)).toBeNull();
    expect((await core.useCases.vines.get(ada, 'web')).source).toMatchObject({ type: 'git', ref: 'main' });
    await expectFailure(core.useCases.vcs.get(ada, 'web'), NotFoundError, 'vcs_not_connected');
    await expectFailure(core.useCases.vcs.disconnect(ada, 'web'), NotFoundError, 'vcs_not_connected');
  });

  it('still disconnects when the provider refuses to delete the hook, and says so in the audit log', async () => {
    await link(ada, 'gho_ada');
    const vine = await seedVine(core, ada, { name: 'web' });
    await core.useCases.vcs.connect(ada, 'web', { provider: 'github', repository: 'acme/infra', branch: 'main' });
    api.fail.deleteHook = new UnavailableError('provider_unavailable', 'GitHub is down');
    await core.useCases.vcs.disconnect(ada, 'web');
    expect(await stored(vine)).toBeNull();
    const entries = await core.useCases.audit.list(ada, {});
    const entry = entries.items.find((candidate) => candidate.action === 'vcs.disconnect');
    expect(entry?.details).toMatchObject({
      hook_removed: false,
      hook_error: 'provider_unavailable',
      hook_id: 'hook-1',
    });
  });
});
