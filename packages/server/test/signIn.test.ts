/**
 * Web sign-in through the real control plane: a real OpenID Provider (oidc-provider on loopback)
 * as the Google provider, GitHub answered by nock with recorded responses. The browser is a
 * cookie jar that follows redirects; nothing is faked between it, Trellis and the issuer.
 */
import { TrellisClient } from '@trellis/client';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { TestBrowser } from '../../providers/test/support/browser.js';
import { fixture } from '../../providers/test/support/fixtures.js';
import { LocalOidcIssuer } from '../../providers/test/support/localOidcIssuer.js';
import { type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';
import { storedIdentityTokens } from './support/rawRows.js';

const GOOGLE = { id: 'trellis-web', secret: 'secret-of-the-trellis-client-at-the-issuer' };
const GITHUB_TOKEN = 'gho_16C7e42F292c6912E7710c838347Ae178B4a';
const REPOS = '/user/repos?per_page=100&sort=updated&affiliation=owner,collaborator,organization_member';

describeEachDialect('web sign-in and repositories', (dialect) => {
  let issuer: LocalOidcIssuer;
  let server: RunningControlPlane;
  let web: string;

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);
    issuer = await LocalOidcIssuer.listen();
    issuer.accounts.set('octocat', { email: 'octocat@github.com', email_verified: true, name: 'The Octocat' });
    issuer.accounts.set('eve', { email: 'eve@example.test', email_verified: false });
    server = await startControlPlane(dialect, {
      env: {
        TRELLIS_GOOGLE_CLIENT_ID: GOOGLE.id,
        TRELLIS_GOOGLE_CLIENT_SECRET: GOOGLE.secret,
        TRELLIS_GOOGLE_BASE_URL: issuer.issuer,
        TRELLIS_GOOGLE_DISPLAY_NAME: 'Local IdP',
        TRELLIS_GITHUB_CLIENT_ID: 'github-client',
        TRELLIS_GITHUB_CLIENT_SECRET: 'github-secret',
      },
    });
    // No TRELLIS_WEB_URL: the web origin (and so the callback URL) follows the bound port.
    web = server.controlPlane.config.webUrl;
    await issuer.configure({
      clientId: GOOGLE.id,
      clientSecret: GOOGLE.secret,
      redirectUri: `${web}/api/auth/callback`,
    });
  });
  afterAll(async () => {
    await server?.close();
    await issuer?.close();
    nock.enableNetConnect();
  });
  afterEach(() => {
    nock.cleanAll();
  });

  /** Starts a sign-in in `browser` and answers where Trellis sends it (the provider's URL). */
  async function start(browser: TestBrowser, provider: string, next?: string): Promise<URL> {
    const query = next === undefined ? '' : `?next=${encodeURIComponent(next)}`;
    const response = await browser.request(`${web}/auth/signin/${provider}${query}`);
    expect(response.status).toBe(303);
    return new URL(response.headers.get('location') as string);
  }

  /** The whole Google (OIDC) sign-in as `account`; answers the callback's final redirect. */
  async function signInWithGoogle(browser: TestBrowser, account = 'octocat', next?: string): Promise<string> {
    const callback = await issuer.authorize(browser, (await start(browser, 'google', next)).href, account);
    expect(callback.href.startsWith(`${web}/api/auth/callback?`)).toBe(true);
    const landed = await browser.request(callback);
    expect(landed.status).toBe(303);
    return landed.headers.get('location') as string;
  }

  /** GitHub sign-in with its API answered by nock; answers the callback's final redirect. */
  async function signInWithGitHub(browser: TestBrowser): Promise<string> {
    const authorize = await start(browser, 'github');
    expect(`${authorize.origin}${authorize.pathname}`).toBe('https://github.com/login/oauth/authorize');
    nock('https://github.com').post('/login/oauth/access_token').reply(200, fixture('github', 'token'));
    nock('https://api.github.com', { reqheaders: { authorization: `Bearer ${GITHUB_TOKEN}` } })
      .get('/user')
      .reply(200, fixture('github', 'user'))
      .get('/user/emails')
      .reply(200, fixture('github', 'emails'));
    const state = authorize.searchParams.get('state') as string;
    const landed = await browser.request(
      `${web}/api/auth/callback?code=github-code&state=${encodeURIComponent(state)}`,
    );
    return landed.headers.get('location') as string;
  }

  /** Approves a CLI login in the browser's session and exchanges it as the CLI would. */
  async function cliLogin(browser: TestBrowser) {
    const deviceCode = crypto.randomUUID();
    const generated = await browser.request(`${web}/api/auth/cli/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: new URL(web).origin },
      body: JSON.stringify({ device_code: deviceCode }),
    });
    expect(generated.status).toBe(201);
    const { verification_code } = (await generated.json()) as { verification_code: string };
    return new TrellisClient({ baseUrl: web }).exchangeCliLogin({ device_code: deviceCode, verification_code });
  }

  it('lists the configured providers for the sign-in page', async () => {
    expect(server.controlPlane.signInProviders).toEqual([
      { id: 'github', name: 'GitHub' },
      { id: 'google', name: 'Local IdP' },
    ]);
  });

  it('signs in with the OpenID Provider: the session works on /api/cli/whoami and lands on next', async () => {
    const browser = new TestBrowser();
    expect(await signInWithGoogle(browser, 'octocat', '/vineyards?tab=mine')).toBe('/vineyards?tab=mine');
    expect(browser.cookie(web, 'trellis_signin')).toBeUndefined();
    const whoami = await browser.request(`${web}/api/cli/whoami`);
    expect(whoami.status).toBe(200);
    expect(await whoami.json()).toMatchObject({ email: 'octocat@github.com', name: 'The Octocat' });
  });

  it('hands the CLI the token of the provider signed in with, and keeps every token encrypted at rest', async () => {
    const viaGoogle = new TestBrowser();
    await signInWithGoogle(viaGoogle);
    const googleLogin = await cliLogin(viaGoogle);
    expect(googleLogin.user_email).toBe('octocat@github.com');
    expect(googleLogin.provider_token).toEqual(expect.any(String));

    const viaGitHub = new TestBrowser();
    expect(await signInWithGitHub(viaGitHub)).toBe('/');
    const githubLogin = await cliLogin(viaGitHub);
    expect(githubLogin.provider_token).toBe(GITHUB_TOKEN);

    // Same verified email at both providers: one user with two identities.
    const stored = await storedIdentityTokens(server.database);
    expect(stored.map((row) => row.provider).sort()).toEqual(['github', 'google']);
    expect(new Set(stored.map((row) => row.user_id)).size).toBe(1);
    for (const row of stored) {
      expect(row.provider_token).toMatch(/^v1\./);
      expect(row.provider_token).not.toContain(GITHUB_TOKEN);
      expect(row.provider_token).not.toContain(googleLogin.provider_token as string);
    }
  });

  it('refuses a tampered state, another provider’s state and an unverified email', async () => {
    const browser = new TestBrowser();
    const callback = await issuer.authorize(browser, (await start(browser, 'google')).href, 'octocat');
    callback.searchParams.set('state', `${callback.searchParams.get('state')}x`);
    const tampered = await browser.request(callback);
    expect(tampered.headers.get('location')).toBe('/signin?error=invalid_state&provider=google');

    // A GitHub sign-in is pending in this browser; the Google answer carries Google's state.
    const other = new TestBrowser();
    const googleCallback = await issuer.authorize(other, (await start(other, 'google')).href, 'octocat');
    await start(other, 'github');
    const mixedUp = await other.request(googleCallback);
    expect(mixedUp.headers.get('location')).toBe('/signin?error=provider_mismatch&provider=github');

    const eve = new TestBrowser();
    expect(await signInWithGoogle(eve, 'eve')).toBe('/signin?error=email_not_verified&provider=google');
    for (const someone of [browser, other, eve]) {
      expect((await someone.request(`${web}/api/cli/whoami`)).status).toBe(401);
    }
  });

  it('refuses a next that leaves the site', async () => {
    const response = await fetch(`${web}/auth/signin/google?next=${encodeURIComponent('https://evil.example/')}`, {
      redirect: 'manual',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'invalid_next' });
  });

  it('lists repositories with the stored GitHub token, every page; 409 without the identity, 401 once revoked', async () => {
    const browser = new TestBrowser();
    await signInWithGitHub(browser);
    const { access_token } = await cliLogin(browser);
    const cli = new TrellisClient({ baseUrl: web, auth: { kind: 'bearer', accessToken: () => access_token } });

    nock('https://api.github.com', { reqheaders: { authorization: `Bearer ${GITHUB_TOKEN}` } })
      .get(REPOS)
      .reply(200, fixture('github', 'repos-page-1'), {
        Link: '<https://api.github.com/user/repositories?page=2>; rel="next"',
      })
      .get('/user/repositories?page=2')
      .reply(200, fixture('github', 'repos-page-2'));
    const repositories = await cli.listRepositories('github');
    expect(repositories.map((repository) => repository.full_name)).toEqual([
      'octocat/Hello-World',
      'octo-org/infra',
      'octocat/boysenberry-repo-1',
    ]);
    expect(repositories[0]).toEqual({
      full_name: 'octocat/Hello-World',
      name: 'Hello-World',
      owner: 'octocat',
      private: false,
      default_branch: 'master',
      clone_url: 'https://github.com/octocat/Hello-World.git',
      html_url: 'https://github.com/octocat/Hello-World',
      updated_at: '2026-02-10T08:12:55.000Z',
    });

    const gitlab = await browser.request(`${web}/api/cli/repositories/gitlab`);
    expect(gitlab.status).toBe(409);
    expect(await gitlab.json()).toMatchObject({ code: 'provider_not_linked' });

    nock('https://api.github.com').get(REPOS).reply(401, fixture('github', 'bad-credentials'));
    const revoked = await browser.request(`${web}/api/cli/repositories/github`);
    expect(revoked.status).toBe(401);
    expect(await revoked.json()).toMatchObject({
      code: 'provider_token_expired',
      detail: expect.stringContaining('sign in with GitHub again'),
    });
  });
});
