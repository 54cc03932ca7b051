import { RateLimitedError, UnauthorizedError, UnavailableError } from '@trellis/core';
import { GitHubProvider, nextLink, pkceChallenge } from '@trellis/providers';
import nock from 'nock';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { authorizationResponse, CLIENT, fixture, REDIRECT_URI } from './support/fixtures.js';

const TOKEN = 'gho_16C7e42F292c6912E7710c838347Ae178B4a';

beforeAll(() => {
  nock.disableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
});

const github = () => new GitHubProvider(CLIENT);

function tokenEndpoint(host = 'https://github.com', reply: unknown = fixture('github', 'token')) {
  return nock(host)
    .post('/login/oauth/access_token', {
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
      code: 'code-1',
      grant_type: 'authorization_code',
      redirect_uri: REDIRECT_URI,
      code_verifier: authorizationResponse({}).codeVerifier,
    })
    .matchHeader('accept', 'application/json')
    .reply(200, reply as nock.Body);
}

function api(host = 'https://api.github.com', prefix = '') {
  return nock(host, { reqheaders: { authorization: `Bearer ${TOKEN}` } })
    .get(`${prefix}/user`)
    .reply(200, fixture('github', 'user'));
}

describe('GitHub sign-in', () => {
  it('sends the browser to github.com with the scopes and a PKCE challenge', async () => {
    const request = authorizationResponse({});
    const url = new URL(await github().authorizationUrl(request));
    expect(`${url.origin}${url.pathname}`).toBe('https://github.com/login/oauth/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: CLIENT.clientId,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      state: request.state,
      scope: 'read:user user:email repo',
      code_challenge: pkceChallenge(request.codeVerifier),
      code_challenge_method: 'S256',
    });
  });

  it('exchanges the code and reads the id, the name and the verified primary email', async () => {
    tokenEndpoint();
    api().get('/user/emails').reply(200, fixture('github', 'emails'));
    expect(await github().exchangeCode(authorizationResponse({ code: 'code-1' }))).toEqual({
      providerUserId: '583231',
      email: 'octocat@github.com',
      emailVerified: true,
      name: 'The Octocat',
      accessToken: TOKEN,
      refreshToken: null,
      expiresInSeconds: null,
      scopes: ['read:user', 'repo', 'user:email'],
    });
    expect(nock.isDone()).toBe(true);
  });

  it('reports an unverified primary email as unverified', async () => {
    tokenEndpoint();
    api().get('/user/emails').reply(200, fixture('github', 'emails-unverified-primary'));
    const profile = await github().exchangeCode(authorizationResponse({ code: 'code-1' }));
    expect(profile).toMatchObject({ email: 'octocat@github.com', emailVerified: false });
  });

  it('has no email when the emails cannot be read (scope not granted)', async () => {
    tokenEndpoint();
    api().get('/user/emails').reply(404, { message: 'Not Found' });
    expect(await github().exchangeCode(authorizationResponse({ code: 'code-1' }))).toMatchObject({
      email: null,
      emailVerified: false,
    });
  });

  it('refuses a code GitHub rejects (its 200 with an error body) as provider_error', async () => {
    tokenEndpoint('https://github.com', fixture('github', 'token-bad-verification-code'));
    const error = await github()
      .exchangeCode(authorizationResponse({ code: 'code-1' }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error).toMatchObject({ code: 'provider_error', message: expect.stringContaining('bad_verification_code') });
  });

  it('answers provider_unavailable when GitHub cannot be reached or fails', async () => {
    nock('https://github.com').post('/login/oauth/access_token').replyWithError('connect ECONNREFUSED');
    await expect(github().exchangeCode(authorizationResponse({ code: 'code-1' }))).rejects.toBeInstanceOf(
      UnavailableError,
    );
    nock('https://github.com').post('/login/oauth/access_token').reply(502, 'Bad Gateway');
    await expect(github().exchangeCode(authorizationResponse({ code: 'code-1' }))).rejects.toMatchObject({
      code: 'provider_unavailable',
    });
  });

  it('refuses an answer naming another issuer (provider_mismatch)', async () => {
    await expect(
      github().exchangeCode(authorizationResponse({ code: 'code-1', iss: 'https://gitlab.com' })),
    ).rejects.toMatchObject({ code: 'provider_mismatch' });
  });

  it('uses /login/oauth and /api/v3 of a GitHub Enterprise Server', async () => {
    const ghe = new GitHubProvider({ ...CLIENT, baseUrl: 'https://ghe.example.com/' });
    expect(new URL(await ghe.authorizationUrl(authorizationResponse({}))).pathname).toBe('/login/oauth/authorize');
    expect(ghe.displayName).toBe('GitHub Enterprise');
    tokenEndpoint('https://ghe.example.com');
    api('https://ghe.example.com', '/api/v3').get('/api/v3/user/emails').reply(200, fixture('github', 'emails'));
    expect((await ghe.exchangeCode(authorizationResponse({ code: 'code-1' }))).providerUserId).toBe('583231');
  });
});

describe('GitHub repositories', () => {
  const REPOS = '/user/repos?per_page=100&sort=updated&affiliation=owner,collaborator,organization_member';

  it('follows Link rel="next" through every page and maps each repository', async () => {
    const page2 = 'https://api.github.com/user/repositories?page=2';
    nock('https://api.github.com', { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .get(REPOS)
      .reply(200, fixture('github', 'repos-page-1'), {
        Link: `<${page2}>; rel="next", <https://api.github.com/user/repositories?page=2>; rel="last"`,
      })
      .get('/user/repositories?page=2')
      .reply(200, fixture('github', 'repos-page-2'), {
        Link: '<https://api.github.com/user/repositories?page=1>; rel="prev"',
      });
    const repositories = await github().listRepositories(TOKEN, { limit: 1000 });
    expect(repositories.map((r) => r.full_name)).toEqual([
      'octocat/Hello-World',
      'octo-org/infra',
      'octocat/boysenberry-repo-1',
    ]);
    expect(repositories[1]).toEqual({
      full_name: 'octo-org/infra',
      name: 'infra',
      owner: 'octo-org',
      private: true,
      default_branch: 'main',
      clone_url: 'https://github.com/octo-org/infra.git',
      html_url: 'https://github.com/octo-org/infra',
      updated_at: '2026-02-08T21:40:03.000Z',
    });
  });

  it('stops at the limit', async () => {
    const scope = nock('https://api.github.com')
      .get(REPOS)
      .reply(200, fixture('github', 'repos-page-1'), {
        Link: '<https://api.github.com/user/repositories?page=2>; rel="next"',
      })
      .get('/user/repositories?page=2')
      .reply(200, fixture('github', 'repos-page-1'), {
        Link: '<https://api.github.com/user/repositories?page=3>; rel="next"',
      });
    expect(await github().listRepositories(TOKEN, { limit: 3 })).toHaveLength(3);
    expect(scope.isDone()).toBe(true);
  });

  it('never sends the token to another host named by a Link header', async () => {
    nock('https://api.github.com')
      .get(REPOS)
      .reply(200, fixture('github', 'repos-page-1'), { Link: '<https://evil.example/steal>; rel="next"' });
    expect(await github().listRepositories(TOKEN, { limit: 1000 })).toHaveLength(2);
  });

  it('answers provider_token_expired for a revoked token (401 Bad credentials)', async () => {
    nock('https://api.github.com').get(REPOS).reply(401, fixture('github', 'bad-credentials'));
    await expect(github().listRepositories(TOKEN, { limit: 1000 })).rejects.toMatchObject({
      code: 'provider_token_expired',
    });
  });

  it('answers rate_limited with the reset time when the rate limit is used up', async () => {
    const reset = Math.floor(Date.now() / 1000) + 120;
    nock('https://api.github.com')
      .get(REPOS)
      .reply(
        403,
        { message: 'API rate limit exceeded' },
        { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      );
    const error = await github()
      .listRepositories(TOKEN, { limit: 1000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterSeconds).toBeGreaterThan(100);
  });

  it('reads the next link of a Link header', () => {
    expect(nextLink('<https://a/x?page=2>; rel="next", <https://a/x?page=9>; rel="last"')).toBe('https://a/x?page=2');
    expect(nextLink('<https://a/x?page=1>; rel="prev"')).toBeNull();
    expect(nextLink(null)).toBeNull();
  });
});
