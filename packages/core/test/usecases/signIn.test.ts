import {
  ForbiddenError,
  type Identity,
  openProviderTokens,
  NotFoundError,
  type PendingSignIn,
  safeNextPath,
  systemScope,
  UnauthorizedError,
  ValidationError,
} from '@trellis/core';
import { createTestCore, FakeSignInProvider, seedUser, type TestCore } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure, expectThrown } from './helpers.js';

const CALLBACK = 'https://trellis.example.test/api/auth/callback';
let core: TestCore;
let github: FakeSignInProvider;
let gitlab: FakeSignInProvider;

beforeEach(() => {
  github = new FakeSignInProvider('github');
  gitlab = new FakeSignInProvider('gitlab');
  core = createTestCore({ providers: { signIn: { github, gitlab }, repositories: {} } });
});

const start = (provider: string, next?: string) => core.useCases.signIn.start(provider, next, CALLBACK);
const complete = (pending: PendingSignIn | null, parameters: Record<string, string>) =>
  core.useCases.signIn.complete(pending, parameters, CALLBACK);

describe('starting a sign-in', () => {
  it('lists the configured providers in page order', () => {
    expect(core.useCases.signIn.providers()).toEqual([
      { id: 'github', name: 'GitHub' },
      { id: 'gitlab', name: 'GitLab' },
    ]);
  });

  it('makes a one-time state naming the provider, a PKCE verifier, a nonce and a 10-minute expiry', async () => {
    const a = await start('github', '/cli/login?device_code=x');
    const b = await start('github');
    expect(a.pending).toMatchObject({ provider: 'github', next: '/cli/login?device_code=x' });
    expect(a.pending.state).toMatch(/^github\.[\w-]{43}$/);
    expect(a.pending.codeVerifier).toMatch(/^[\w-]{43}$/);
    expect(a.pending.nonce).toMatch(/^[\w-]{32}$/);
    expect(a.pending.state).not.toBe(b.pending.state);
    expect(b.pending.next).toBe('/');
    expect(Date.parse(a.pending.expiresAt) - core.clock.now().getTime()).toBe(600_000);
    expect(new URL(a.authorizationUrl).searchParams.get('state')).toBe(a.pending.state);
    expect(new URL(a.authorizationUrl).searchParams.get('redirect_uri')).toBe(CALLBACK);
  });

  it('refuses an unconfigured or unknown provider (provider_not_configured)', async () => {
    await expectFailure(start('bitbucket'), NotFoundError, 'provider_not_configured');
    await expectFailure(start('myspace'), NotFoundError, 'provider_not_configured');
  });

  it.each(['https://evil.example', '//evil.example', '/\\evil.example', 'relative', '/a\nb', '/\\/x'])(
    'refuses next=%j (invalid_next)',
    async (next) => {
      await expectFailure(start('github', next), ValidationError, 'invalid_next');
    },
  );

  it('keeps same-origin paths as they are', () => {
    expect(safeNextPath('/dashboard?tab=jobs#top')).toBe('/dashboard?tab=jobs#top');
    expect(safeNextPath(undefined)).toBe('/');
    expectThrown(() => safeNextPath(['/a']), ValidationError, 'invalid_next');
  });
});

describe('completing a sign-in', () => {
  it('creates the user and the identity, with the token sealed for that identity', async () => {
    github.account('good', {
      email: 'Ada@Example.test',
      name: 'Ada',
      providerUserId: '42',
      accessToken: 'gho_abc',
      scopes: ['repo', 'read:user'],
    });
    const { pending } = await start('github', '/vineyards');
    const result = await complete(pending, { code: 'good', state: pending.state });
    expect(result).toMatchObject({
      provider: 'github',
      next: '/vineyards',
      user: { email: 'ada@example.test', name: 'Ada' },
    });
    const [identity] = await core.uow.run(systemScope, (stores) => stores.identities.listForUser(result.user.id));
    expect(identity).toMatchObject({ provider: 'github', provider_user_id: '42', scopes: 'repo read:user' });
    expect(identity?.provider_token).not.toContain('gho_abc');
    expect(await openProviderTokens(core.secrets, identity as Identity & { provider_token: string })).toEqual({
      accessToken: 'gho_abc',
      refreshToken: null,
      expiresAt: null,
    });
    expect(github.exchanges[0]).toMatchObject({
      redirectUri: CALLBACK,
      state: pending.state,
      codeVerifier: pending.codeVerifier,
      nonce: pending.nonce,
    });
  });

  it('links a second provider with the same verified email to the same user, and keeps a link to its user', async () => {
    const ada = await seedUser(core, { email: 'ada@example.test' });
    gitlab.account('c1', { email: 'ada@example.test', providerUserId: '7' });
    const first = await start('gitlab');
    expect((await complete(first.pending, { code: 'c1', state: first.pending.state })).user.id).toBe(ada.userId);
    // The email changed at GitLab: the link still signs in Ada.
    gitlab.account('c2', { email: 'ada.new@example.test', providerUserId: '7', accessToken: 'newer' });
    const second = await start('gitlab');
    expect((await complete(second.pending, { code: 'c2', state: second.pending.state })).user.id).toBe(ada.userId);
    const identities = await core.uow.run(systemScope, (stores) => stores.identities.listForUser(ada.userId));
    expect(identities).toHaveLength(1);
    const tokens = await openProviderTokens(core.secrets, identities[0] as Identity & { provider_token: string });
    expect(tokens.accessToken).toBe('newer');
  });

  it('keeps the refresh token and when the access token expires, sealed with it', async () => {
    gitlab.account('c1', {
      email: 'ada@example.test',
      providerUserId: '9',
      accessToken: 'glat',
      refreshToken: 'glrt',
      expiresInSeconds: 7200,
    });
    const { pending } = await start('gitlab');
    const { user } = await complete(pending, { code: 'c1', state: pending.state });
    const [identity] = await core.uow.run(systemScope, (stores) => stores.identities.listForUser(user.id));
    expect(identity?.provider_token).not.toContain('glrt');
    expect(await openProviderTokens(core.secrets, identity as Identity & { provider_token: string })).toEqual({
      accessToken: 'glat',
      refreshToken: 'glrt',
      expiresAt: new Date(core.clock.now().getTime() + 7_200_000).toISOString(),
    });
  });

  it('refuses an account without a verified email (email_not_verified) and stores nothing', async () => {
    github.account('unverified', { email: 'eve@example.test', emailVerified: false });
    github.account('none', { email: null });
    for (const code of ['unverified', 'none']) {
      const { pending } = await start('github');
      await expectFailure(complete(pending, { code, state: pending.state }), ForbiddenError, 'email_not_verified');
    }
    expect(core.uow.snapshot().users.size).toBe(0);
    expect(core.uow.snapshot().identities.size).toBe(0);
  });

  it('refuses a missing, expired or tampered state (invalid_state) without calling the provider', async () => {
    github.account('good', { email: 'ada@example.test' });
    const { pending } = await start('github');
    await expectFailure(complete(null, { code: 'good', state: pending.state }), UnauthorizedError, 'invalid_state');
    await expectFailure(complete(pending, { code: 'good' }), UnauthorizedError, 'invalid_state');
    await expectFailure(
      complete(pending, { code: 'good', state: `${pending.state}x` }),
      UnauthorizedError,
      'invalid_state',
    );
    core.clock.advance({ seconds: 601 });
    await expectFailure(complete(pending, { code: 'good', state: pending.state }), UnauthorizedError, 'invalid_state');
    expect(github.exchanges).toEqual([]);
  });

  it("refuses another provider's state (provider_mismatch): one provider cannot complete another's sign-in", async () => {
    gitlab.account('good', { email: 'ada@example.test' });
    const viaGitHub = await start('github');
    const viaGitLab = await start('gitlab');
    await expectFailure(
      complete(viaGitHub.pending, { code: 'good', state: viaGitLab.pending.state }),
      UnauthorizedError,
      'provider_mismatch',
    );
    expect(gitlab.exchanges).toEqual([]);
    expect(github.exchanges).toEqual([]);
  });

  it('reports a cancelled consent (access_denied) and other provider errors (provider_error)', async () => {
    const { pending } = await start('github');
    await expectFailure(
      complete(pending, { error: 'access_denied', state: pending.state }),
      UnauthorizedError,
      'access_denied',
    );
    await expectFailure(
      complete(pending, { error: 'server_error', state: pending.state }),
      UnauthorizedError,
      'provider_error',
    );
    await expectFailure(complete(pending, { state: pending.state }), UnauthorizedError, 'provider_error');
    await expectFailure(
      complete(pending, { code: 'unknown', state: pending.state }),
      UnauthorizedError,
      'provider_error',
    );
  });
});
