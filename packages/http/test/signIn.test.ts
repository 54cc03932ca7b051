import { type Identity, openProviderTokens } from '@trellis/core';
import { FakeRepositoryLister, FakeSignInProvider } from '@trellis/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApiHarness, json, startApi, WEB_ORIGIN } from './harness.js';

let api: ApiHarness;
let github: FakeSignInProvider;
let repositories: FakeRepositoryLister;

beforeEach(async () => {
  github = new FakeSignInProvider('github').account('ok', { email: 'ada@example.test', accessToken: 'gho_ada' });
  repositories = new FakeRepositoryLister();
  api = await startApi({ providers: { signIn: { github }, repositories: { github: repositories } } });
});
afterEach(async () => {
  await api.close();
});

const cookieOf = (response: Response, name: string) =>
  response.headers
    .getSetCookie()
    .find((cookie) => cookie.startsWith(`${name}=`))
    ?.split(';')[0];

/** Starts a sign-in and answers the state and the sign-in cookie the browser would keep. */
async function startSignIn(next?: string) {
  const query = next === undefined ? '' : `?next=${encodeURIComponent(next)}`;
  const response = await fetch(`${api.url}/auth/signin/github${query}`, { redirect: 'manual' });
  expect(response.status).toBe(303);
  const location = new URL(response.headers.get('location') as string);
  return {
    state: location.searchParams.get('state') as string,
    cookie: cookieOf(response, 'trellis_signin') as string,
    response,
  };
}

const callback = (query: Record<string, string>, cookie = '') =>
  fetch(`${api.url}/api/auth/callback?${new URLSearchParams(query)}`, { redirect: 'manual', headers: { cookie } });

describe('GET /auth/signin/{provider}', () => {
  it('sends the browser to the provider with the callback URL and a short-lived HTTP-only Lax cookie', async () => {
    const { state, cookie, response } = await startSignIn('/cli/login?device_code=abc');
    const location = new URL(response.headers.get('location') as string);
    expect(location.origin).toBe('https://github.example.test');
    expect(location.searchParams.get('redirect_uri')).toBe(`${WEB_ORIGIN}/api/auth/callback`);
    expect(state).toMatch(/^github\./);
    const setCookie = response.headers.getSetCookie().find((c) => c.startsWith('trellis_signin=')) as string;
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Max-Age=600/);
    expect(cookie).toBeTruthy();
  });

  it('answers problems for an off-site next and an unconfigured provider', async () => {
    const offSite = await fetch(`${api.url}/auth/signin/github?next=${encodeURIComponent('//evil.example/')}`, {
      redirect: 'manual',
    });
    expect(offSite.status).toBe(400);
    expect((await offSite.json()).code).toBe('invalid_next');
    const gitlab = await fetch(`${api.url}/auth/signin/gitlab`, { redirect: 'manual' });
    expect(gitlab.status).toBe(404);
    expect((await gitlab.json()).code).toBe('provider_not_configured');
  });

  it('lists the configured providers for the sign-in page', async () => {
    const response = await fetch(`${api.url}/api/auth/providers`);
    expect(await response.json()).toEqual({
      providers: [{ id: 'github', name: 'GitHub', signin_url: '/auth/signin/github' }],
    });
  });
});

describe('GET /api/auth/callback', () => {
  it('starts a session remembering the provider and lands on next; the CLI login it approves carries that token', async () => {
    const { state, cookie } = await startSignIn('/cli/login?device_code=abc');
    const response = await callback({ code: 'ok', state }, cookie);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/cli/login?device_code=abc');
    expect(response.headers.getSetCookie().find((c) => c.startsWith('trellis_signin='))).toMatch(/Max-Age=0/);
    const session = cookieOf(response, 'trellis_session') as string;
    const whoami = await fetch(`${api.url}/api/cli/whoami`, { headers: { cookie: session } });
    expect(await whoami.json()).toMatchObject({ email: 'ada@example.test' });

    const deviceCode = crypto.randomUUID();
    const generated = await fetch(
      `${api.url}/api/auth/cli/generate`,
      json({ device_code: deviceCode }, { cookie: session, origin: WEB_ORIGIN }),
    );
    const { verification_code } = await generated.json();
    expect(api.core.uow.snapshot().cliLogins.get(deviceCode)?.provider).toBe('github');
    const exchanged = await fetch(
      `${api.url}/api/auth/cli/exchange`,
      json({ device_code: deviceCode, verification_code }),
    );
    expect(await exchanged.json()).toMatchObject({ provider_token: 'gho_ada', user_email: 'ada@example.test' });
  });

  it('works once: the same answer again is refused', async () => {
    const { state, cookie } = await startSignIn();
    expect((await callback({ code: 'ok', state }, cookie)).headers.get('location')).toBe('/');
    const again = await callback({ code: 'ok', state });
    expect(again.headers.get('location')).toBe('/signin?error=invalid_state');
  });

  it.each([
    ['a tampered state', (state: string) => ({ code: 'ok', state: `${state}x` }), 'invalid_state'],
    ['a cancelled consent', (state: string) => ({ error: 'access_denied', state }), 'access_denied'],
    ['a refused code', (state: string) => ({ code: 'nope', state }), 'provider_error'],
  ])('redirects %s to the sign-in page with its code, provider and next', async (_name, query, code) => {
    const { state, cookie } = await startSignIn('/dashboard');
    const response = await callback(query(state), cookie);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`/signin?error=${code}&provider=github&next=%2Fdashboard`);
    expect(cookieOf(response, 'trellis_session')).toBeUndefined();
  });

  it('refuses a forged sign-in cookie', async () => {
    const { state, cookie } = await startSignIn();
    const [name, value] = cookie.split('=') as [string, string];
    // A character of its signature changed (not the last, whose low bits can carry nothing).
    const at = value.length - 5;
    const forged = `${name}=${value.slice(0, at)}${value[at] === 'A' ? 'B' : 'A'}${value.slice(at + 1)}`;
    expect((await callback({ code: 'ok', state }, forged)).headers.get('location')).toBe('/signin?error=invalid_state');
  });
});

describe('GET /api/cli/repositories/{provider}', () => {
  async function signedIn(): Promise<string> {
    const { state, cookie } = await startSignIn();
    return cookieOf(await callback({ code: 'ok', state }, cookie), 'trellis_session') as string;
  }

  it('lists with the session user’s provider token', async () => {
    const session = await signedIn();
    repositories.repositories.set('gho_ada', [
      {
        full_name: 'ada/api',
        name: 'api',
        owner: 'ada',
        private: true,
        default_branch: 'main',
        clone_url: 'https://github.com/ada/api.git',
        html_url: 'https://github.com/ada/api',
        updated_at: '2026-01-01T00:00:00Z',
      },
    ]);
    const response = await fetch(`${api.url}/api/cli/repositories/github`, { headers: { cookie: session } });
    expect(response.status).toBe(200);
    expect((await response.json()).repositories.map((r: { full_name: string }) => r.full_name)).toEqual(['ada/api']);
  });

  it('answers 409 provider_not_linked, 401 provider_token_expired and 400 for google', async () => {
    const session = await signedIn();
    const gitlab = await fetch(`${api.url}/api/cli/repositories/gitlab`, { headers: { cookie: session } });
    expect(gitlab.status).toBe(409);
    expect((await gitlab.json()).code).toBe('provider_not_linked');
    const expired = await fetch(`${api.url}/api/cli/repositories/github`, { headers: { cookie: session } });
    expect(expired.status).toBe(401);
    expect(await expired.json()).toMatchObject({
      code: 'provider_token_expired',
      detail: expect.stringMatching(/sign in with GitHub again/),
    });
    const google = await fetch(`${api.url}/api/cli/repositories/google`, { headers: { cookie: session } });
    expect(google.status).toBe(400);
    // The token is stored sealed, never as sent.
    const [identity] = [...api.core.uow.snapshot().identities.values()];
    expect(identity?.provider_token).not.toContain('gho_ada');
    const tokens = await openProviderTokens(api.core.secrets, identity as Identity & { provider_token: string });
    expect(tokens.accessToken).toBe('gho_ada');
  });
});
