import {
  ConflictError,
  type Identity,
  openProviderTokens,
  sealProviderTokens,
  systemScope,
  UnauthorizedError,
  UnavailableError,
  vcsTokenFor,
} from '@trellis/core';
import { createTestCore, FakeRepositoryLister, seedUser, type TestCore, type TestUser } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from './helpers.js';

let core: TestCore;
let github: FakeRepositoryLister;
let ada: TestUser;

beforeEach(async () => {
  github = new FakeRepositoryLister();
  core = createTestCore({ providers: { signIn: {}, repositories: { github } } });
  ada = await seedUser(core, { email: 'ada@example.test' });
});

async function link(accessToken: string, refreshToken: string | null, expiresAt: string | null): Promise<void> {
  const sealed = await sealProviderTokens(
    core.secrets,
    { provider: 'github', provider_user_id: 'p-1' },
    { accessToken, refreshToken, expiresAt },
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

const tokenFor = (provider: 'github' | 'gitlab' = 'github') =>
  core.uow.run(systemScope, (stores) => vcsTokenFor(stores, core.deps, { provider, connected_by: ada.userId }));

describe('vcsTokenFor', () => {
  it('answers the stored access token while it is valid', async () => {
    await link('gho_ada', 'refresh-1', new Date(core.clock.now().getTime() + 3_600_000).toISOString());
    expect(await tokenFor()).toBe('gho_ada');
    expect(github.refreshCalls).toEqual([]);
  });

  it('renews an expired token with the refresh token and stores the renewed tokens', async () => {
    await link('old', 'refresh-1', new Date(core.clock.now().getTime() - 1000).toISOString());
    github.refreshes.set('refresh-1', { accessToken: 'new', refreshToken: 'refresh-2', expiresInSeconds: 3600 });
    expect(await tokenFor()).toBe('new');
    const [identity] = await core.uow.run(systemScope, (stores) => stores.identities.listForUser(ada.userId));
    expect(await openProviderTokens(core.secrets, identity as Identity & { provider_token: string })).toEqual({
      accessToken: 'new',
      refreshToken: 'refresh-2',
      expiresAt: new Date(core.clock.now().getTime() + 3_600_000).toISOString(),
    });
  });

  it('401s provider_token_expired when the refresh token is refused', async () => {
    await link('old', 'refresh-1', new Date(core.clock.now().getTime() - 1000).toISOString());
    await expectFailure(tokenFor(), UnauthorizedError, 'provider_token_expired');
  });

  it('409s provider_not_linked when the connecting user has no identity at the provider', async () => {
    await expectFailure(tokenFor(), ConflictError, 'provider_not_linked');
  });

  it('answers provider_not_configured for a provider the server lacks', async () => {
    await core.uow.run(systemScope, (stores) =>
      stores.identities.upsert({
        user_id: ada.userId,
        provider: 'gitlab',
        provider_user_id: 'p-2',
        provider_token: 'sealed',
        scopes: '',
      }),
    );
    await expectFailure(tokenFor('gitlab'), UnavailableError, 'provider_not_configured');
  });
});
