import {
  ConflictError,
  type GitRepository,
  type Identity,
  identityTokenContext,
  MAX_LISTED_REPOSITORIES,
  openProviderTokens,
  sealProviderTokens,
  systemScope,
  UnauthorizedError,
  UnavailableError,
  ValidationError,
} from '@trellis/core';
import { createTestCore, FakeRepositoryLister, seedUser, type TestCore, type TestUser } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from '../usecases/helpers.js';

let core: TestCore;
let github: FakeRepositoryLister;
let ada: TestUser;

const repository = (name: string): GitRepository => ({
  full_name: `ada/${name}`,
  name,
  owner: 'ada',
  private: false,
  default_branch: 'main',
  clone_url: `https://github.com/ada/${name}.git`,
  html_url: `https://github.com/ada/${name}`,
  updated_at: '2026-01-01T00:00:00Z',
});

async function link(provider: 'github' | 'gitlab', token: string | null): Promise<void> {
  const sealed = token === null ? null : await core.secrets.seal(token, identityTokenContext(provider, 'p-1'));
  await core.uow.run(systemScope, (stores) =>
    stores.identities.upsert({
      user_id: ada.userId,
      provider,
      provider_user_id: 'p-1',
      provider_token: sealed,
      scopes: '',
    }),
  );
}

beforeEach(async () => {
  github = new FakeRepositoryLister();
  core = createTestCore({ providers: { signIn: {}, repositories: { github } } });
  ada = await seedUser(core, { email: 'ada@example.test' });
});

describe('listing repositories', () => {
  it('lists with the decrypted token of that provider, capped at the limit', async () => {
    await link('github', 'gho_ada');
    github.repositories.set('gho_ada', [repository('api'), repository('web')]);
    expect(await core.useCases.repositories.list(ada, 'github')).toEqual([repository('api'), repository('web')]);
    expect(github.calls).toEqual([{ accessToken: 'gho_ada', limit: MAX_LISTED_REPOSITORIES }]);
  });

  async function linkWithRefresh(accessToken: string, expiresAt: string): Promise<void> {
    const sealed = await sealProviderTokens(
      core.secrets,
      { provider: 'github', provider_user_id: 'p-1' },
      { accessToken, refreshToken: 'refresh-1', expiresAt },
    );
    await core.uow.run(systemScope, (stores) =>
      stores.identities.upsert({
        user_id: ada.userId,
        provider: 'github',
        provider_user_id: 'p-1',
        provider_token: sealed,
        scopes: '',
      }),
    );
  }
  const stored = async () => {
    const [identity] = await core.uow.run(systemScope, (stores) => stores.identities.listForUser(ada.userId));
    return openProviderTokens(core.secrets, identity as Identity & { provider_token: string });
  };

  it('renews an expired token with the refresh token first, and keeps the renewed tokens', async () => {
    await linkWithRefresh('old', new Date(core.clock.now().getTime() - 1000).toISOString());
    github.refreshes.set('refresh-1', { accessToken: 'new', refreshToken: 'refresh-2', expiresInSeconds: 7200 });
    github.repositories.set('new', [repository('api')]);
    expect(await core.useCases.repositories.list(ada, 'github')).toEqual([repository('api')]);
    expect(github.calls.map((call) => call.accessToken)).toEqual(['new']);
    expect(await stored()).toEqual({
      accessToken: 'new',
      refreshToken: 'refresh-2',
      expiresAt: new Date(core.clock.now().getTime() + 7_200_000).toISOString(),
    });
  });

  it('renews once when the provider refuses a token that has not expired yet', async () => {
    await linkWithRefresh('revoked', new Date(core.clock.now().getTime() + 3_600_000).toISOString());
    github.refreshes.set('refresh-1', { accessToken: 'new', refreshToken: null, expiresInSeconds: null });
    github.repositories.set('new', [repository('web')]);
    expect(await core.useCases.repositories.list(ada, 'github')).toEqual([repository('web')]);
    expect(github.calls.map((call) => call.accessToken)).toEqual(['revoked', 'new']);
    expect(await stored()).toEqual({ accessToken: 'new', refreshToken: 'refresh-1', expiresAt: null });
  });

  it('401s when the refresh token is refused too', async () => {
    await linkWithRefresh('old', new Date(core.clock.now().getTime() - 1000).toISOString());
    await expectFailure(core.useCases.repositories.list(ada, 'github'), UnauthorizedError, 'provider_token_expired');
    expect(github.refreshCalls).toEqual(['refresh-1']);
    expect(github.calls).toEqual([]);
  });

  it('409s a provider the user never signed in with (provider_not_linked)', async () => {
    await link('gitlab', 'glpat');
    await expectFailure(core.useCases.repositories.list(ada, 'github'), ConflictError, 'provider_not_linked');
  });

  it('401s a token the provider refuses, naming the provider to sign in with again', async () => {
    await link('github', 'gho_revoked');
    const error = await expectFailure(
      core.useCases.repositories.list(ada, 'github'),
      UnauthorizedError,
      'provider_token_expired',
    );
    expect(error.message).toMatch(/sign in with GitHub again/);
  });

  it('401s a stored token that no longer opens (the key changed)', async () => {
    await core.uow.run(systemScope, (stores) =>
      stores.identities.upsert({
        user_id: ada.userId,
        provider: 'github',
        provider_user_id: 'p-1',
        provider_token: 'v1.x.y.z.w',
        scopes: '',
      }),
    );
    await expectFailure(core.useCases.repositories.list(ada, 'github'), UnauthorizedError, 'provider_token_expired');
  });

  it('refuses a provider that is no git host, and a git host the server is not configured for', async () => {
    await expectFailure(core.useCases.repositories.list(ada, 'google'), ValidationError);
    await link('gitlab', 'glpat');
    await expectFailure(core.useCases.repositories.list(ada, 'gitlab'), UnavailableError, 'provider_not_configured');
  });
});
