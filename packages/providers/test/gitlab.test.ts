import { GitLabProvider, pkceChallenge } from '@trellis/providers';
import nock from 'nock';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { authorizationResponse, CLIENT, fixture, REDIRECT_URI } from './support/fixtures.js';

const TOKEN = 'de6780bc506a0446309bd9362820ba8aed28aa506c71eedbe1c5c4f9dd350e54';

beforeAll(() => {
  nock.disableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
});

const gitlab = (baseUrl?: string) => new GitLabProvider({ ...CLIENT, baseUrl: baseUrl ?? null });

function tokenEndpoint(host = 'https://gitlab.com') {
  return nock(host)
    .post('/oauth/token', {
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
      code: 'code-1',
      grant_type: 'authorization_code',
      redirect_uri: REDIRECT_URI,
      code_verifier: authorizationResponse({}).codeVerifier,
    })
    .reply(200, fixture('gitlab', 'token'));
}

const api = (host = 'https://gitlab.com') => nock(host, { reqheaders: { authorization: `Bearer ${TOKEN}` } });

describe('GitLab sign-in', () => {
  it('sends the browser to gitlab.com with read_user read_api and a PKCE challenge', async () => {
    const request = authorizationResponse({});
    const url = new URL(await gitlab().authorizationUrl(request));
    expect(`${url.origin}${url.pathname}`).toBe('https://gitlab.com/oauth/authorize');
    expect(url.searchParams.get('scope')).toBe('read_user read_api');
    expect(url.searchParams.get('code_challenge')).toBe(pkceChallenge(request.codeVerifier));
  });

  it('exchanges the code and reads the user, its email confirmed', async () => {
    tokenEndpoint();
    api().get('/api/v4/user').reply(200, fixture('gitlab', 'user'));
    expect(await gitlab().exchangeCode(authorizationResponse({ code: 'code-1' }))).toEqual({
      providerUserId: '1234567',
      email: 'jane@example.com',
      emailVerified: true,
      name: 'Jane Doe',
      accessToken: TOKEN,
      refreshToken: '8257e65c97202ed1726cf9571600918f3bffb2544b26e00a61df9897668c33a1',
      expiresInSeconds: 7200,
      scopes: ['read_user', 'read_api'],
    });
  });

  it('reports an unconfirmed email as unverified', async () => {
    tokenEndpoint();
    api().get('/api/v4/user').reply(200, fixture('gitlab', 'user-unconfirmed'));
    expect(await gitlab().exchangeCode(authorizationResponse({ code: 'code-1' }))).toMatchObject({
      emailVerified: false,
    });
  });

  it('asks /user/emails when /user does not say whether the email is confirmed (self-managed)', async () => {
    tokenEndpoint('https://gitlab.example.com');
    api('https://gitlab.example.com')
      .get('/api/v4/user')
      .reply(200, fixture('gitlab', 'user-without-confirmed-at'))
      .get('/api/v4/user/emails')
      .reply(200, fixture('gitlab', 'emails'));
    const profile = await gitlab('https://gitlab.example.com').exchangeCode(authorizationResponse({ code: 'code-1' }));
    expect(profile).toMatchObject({ email: 'jane@example.com', emailVerified: true });
  });

  it('refuses a code GitLab rejects (invalid_grant) as provider_error', async () => {
    nock('https://gitlab.com').post('/oauth/token').reply(400, fixture('gitlab', 'token-invalid-grant'));
    await expect(gitlab().exchangeCode(authorizationResponse({ code: 'code-1' }))).rejects.toMatchObject({
      code: 'provider_error',
      message: expect.stringContaining('invalid_grant'),
    });
  });
});

describe('GitLab token renewal', () => {
  const REFRESH = '8257e65c97202ed1726cf9571600918f3bffb2544b26e00a61df9897668c33a1';

  it('renews an access token with the refresh token (GitLab rotates it)', async () => {
    nock('https://gitlab.com')
      .post('/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: 'old-refresh-token',
        client_id: CLIENT.clientId,
        client_secret: CLIENT.clientSecret,
      })
      .reply(200, fixture('gitlab', 'token'));
    expect(await gitlab().refreshAccessToken('old-refresh-token')).toEqual({
      accessToken: TOKEN,
      refreshToken: REFRESH,
      expiresInSeconds: 7200,
    });
  });

  it('answers provider_token_expired when the refresh token is refused', async () => {
    nock('https://gitlab.com').post('/oauth/token').reply(400, fixture('gitlab', 'token-invalid-grant'));
    await expect(gitlab().refreshAccessToken('revoked')).rejects.toMatchObject({ code: 'provider_token_expired' });
  });
});

describe('GitLab repositories', () => {
  const FIRST = '/api/v4/projects?membership=true&per_page=100&order_by=last_activity_at&sort=desc';

  it('follows x-next-page and maps each project', async () => {
    api()
      .get(FIRST)
      .reply(200, fixture('gitlab', 'projects-page-1'), { 'x-next-page': '2', 'x-page': '1', 'x-per-page': '100' })
      .get(`${FIRST}&page=2`)
      .reply(200, fixture('gitlab', 'projects-page-2'), { 'x-next-page': '', 'x-page': '2', 'x-per-page': '100' });
    const repositories = await gitlab().listRepositories(TOKEN, { limit: 1000 });
    expect(repositories).toEqual([
      {
        full_name: 'acme/platform/infra',
        name: 'infra',
        owner: 'acme/platform',
        private: true,
        default_branch: 'main',
        clone_url: 'https://gitlab.com/acme/platform/infra.git',
        html_url: 'https://gitlab.com/acme/platform/infra',
        updated_at: '2026-02-10T09:30:00.000Z',
      },
      expect.objectContaining({ full_name: 'acme/handbook', private: true }),
      expect.objectContaining({
        full_name: 'jane.doe/dotfiles',
        private: false,
        default_branch: null,
        owner: 'jane.doe',
      }),
    ]);
  });

  it('answers provider_token_expired for a revoked token', async () => {
    api().get(FIRST).reply(401, fixture('gitlab', 'token-revoked'));
    await expect(gitlab().listRepositories(TOKEN, { limit: 1000 })).rejects.toMatchObject({
      code: 'provider_token_expired',
    });
  });
});
