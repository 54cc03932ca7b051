import { BitbucketProvider } from '@trellis/providers';
import nock from 'nock';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { authorizationResponse, CLIENT, fixture, REDIRECT_URI } from './support/fixtures.js';

const TOKEN = 'ATCTT3xFfGN0Yd5Xo0OxsB3Z1Yw-example-access-token';
const BASIC = `Basic ${Buffer.from(`${CLIENT.clientId}:${CLIENT.clientSecret}`).toString('base64')}`;

beforeAll(() => {
  nock.disableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
});

const bitbucket = () => new BitbucketProvider(CLIENT);
const api = () => nock('https://api.bitbucket.org', { reqheaders: { authorization: `Bearer ${TOKEN}` } });

function tokenEndpoint() {
  return nock('https://bitbucket.org', { reqheaders: { authorization: BASIC } })
    .post('/site/oauth2/access_token', { grant_type: 'authorization_code', code: 'code-1', redirect_uri: REDIRECT_URI })
    .reply(200, fixture('bitbucket', 'token'));
}

describe('Bitbucket sign-in', () => {
  it('sends the browser to bitbucket.org without PKCE (Bitbucket has none) and without scopes (set on the consumer)', async () => {
    const url = new URL(await bitbucket().authorizationUrl(authorizationResponse({})));
    expect(`${url.origin}${url.pathname}`).toBe('https://bitbucket.org/site/oauth2/authorize');
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'redirect_uri', 'response_type', 'state']);
  });

  it('exchanges the code with HTTP Basic client authentication and reads uuid and the confirmed primary email', async () => {
    tokenEndpoint();
    api()
      .get('/2.0/user')
      .reply(200, fixture('bitbucket', 'user'))
      .get('/2.0/user/emails')
      .reply(200, fixture('bitbucket', 'emails'));
    expect(await bitbucket().exchangeCode(authorizationResponse({ code: 'code-1' }))).toEqual({
      providerUserId: '{7c1b2a8e-5f0d-4b7a-9a4e-2f1f7f4c9b10}',
      email: 'sam@example.org',
      emailVerified: true,
      name: 'Sam Rivera',
      accessToken: TOKEN,
      refreshToken: 'Vx4pKq2example-refresh',
      expiresInSeconds: 7200,
      scopes: ['account', 'email', 'repository'],
    });
  });

  it('reports an unconfirmed primary email as unverified', async () => {
    tokenEndpoint();
    api()
      .get('/2.0/user')
      .reply(200, fixture('bitbucket', 'user'))
      .get('/2.0/user/emails')
      .reply(200, fixture('bitbucket', 'emails-unconfirmed-primary'));
    expect(await bitbucket().exchangeCode(authorizationResponse({ code: 'code-1' }))).toMatchObject({
      email: 'sam@example.org',
      emailVerified: false,
    });
  });

  it('refuses a code Bitbucket rejects as provider_error', async () => {
    nock('https://bitbucket.org')
      .post('/site/oauth2/access_token')
      .reply(400, fixture('bitbucket', 'token-invalid-grant'));
    await expect(bitbucket().exchangeCode(authorizationResponse({ code: 'code-1' }))).rejects.toMatchObject({
      code: 'provider_error',
    });
  });

  it('uses <base>/site/oauth2 and <base>/api/2.0 with a base URL', async () => {
    const custom = new BitbucketProvider({ ...CLIENT, baseUrl: 'http://127.0.0.1:7990' });
    expect(custom.apiBase).toBe('http://127.0.0.1:7990/api/2.0');
    expect(new URL(await custom.authorizationUrl(authorizationResponse({}))).pathname).toBe('/site/oauth2/authorize');
  });
});

describe('Bitbucket token renewal', () => {
  it('renews an access token with the refresh token, authenticating with HTTP Basic', async () => {
    nock('https://bitbucket.org', { reqheaders: { authorization: BASIC } })
      .post('/site/oauth2/access_token', { grant_type: 'refresh_token', refresh_token: 'Vx4pKq2example-refresh' })
      .reply(200, fixture('bitbucket', 'token'));
    expect(await bitbucket().refreshAccessToken('Vx4pKq2example-refresh')).toMatchObject({
      accessToken: TOKEN,
      expiresInSeconds: 7200,
    });
  });
});

describe('Bitbucket repositories', () => {
  it('follows next through every page, with clone URLs stripped of the username', async () => {
    api()
      .get('/2.0/repositories?role=member&pagelen=100&sort=-updated_on')
      .reply(200, fixture('bitbucket', 'repositories-page-1'))
      .get('/2.0/repositories?role=member&pagelen=2&sort=-updated_on&page=2')
      .reply(200, fixture('bitbucket', 'repositories-page-2'));
    const repositories = await bitbucket().listRepositories(TOKEN, { limit: 1000 });
    expect(repositories).toEqual([
      {
        full_name: 'acme/deploy-config',
        name: 'deploy-config',
        owner: 'acme',
        private: true,
        default_branch: 'main',
        clone_url: 'https://bitbucket.org/acme/deploy-config.git',
        html_url: 'https://bitbucket.org/acme/deploy-config',
        updated_at: '2026-02-09T14:22:31.123Z',
      },
      expect.objectContaining({ full_name: 'samrivera/notes', private: false, default_branch: null }),
      expect.objectContaining({ full_name: 'acme/network', default_branch: 'trunk' }),
    ]);
  });

  it('answers provider_token_expired for an expired token', async () => {
    api()
      .get('/2.0/repositories?role=member&pagelen=100&sort=-updated_on')
      .reply(401, fixture('bitbucket', 'access-token-expired'));
    await expect(bitbucket().listRepositories(TOKEN, { limit: 1000 })).rejects.toMatchObject({
      code: 'provider_token_expired',
    });
  });
});
