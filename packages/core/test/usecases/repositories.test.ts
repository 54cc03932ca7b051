import {
  ConflictError,
  type GitRepository,
  identityTokenContext,
  MAX_LISTED_REPOSITORIES,
  systemScope,
  UnauthorizedError,
  UnavailableError,
  ValidationError,
} from '@trellis/core';
import { createTestCore, FakeRepositoryLister, seedUser, type TestCore, type TestUser } from '@trellis/testkit';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from './helpers.js';

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
