/**
 * The generic OpenID Connect client against a real OpenID Provider (oidc-provider) on loopback:
 * discovery, PKCE, nonce, the ID token's signature and claims, the RFC 9207 `iss` parameter.
 */
import { randomBytes } from 'node:crypto';
import { UnauthorizedError, UnavailableError } from '@trellis/core';
import { OidcSignInProvider, pkceChallenge } from '@trellis/providers';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TestBrowser } from './support/browser.js';
import { LocalOidcIssuer } from './support/localOidcIssuer.js';

const REDIRECT_URI = 'http://127.0.0.1:9/api/auth/callback';
const CLIENT = { clientId: 'trellis-test', clientSecret: 'a-client-secret-for-the-local-issuer' };
let issuer: LocalOidcIssuer;
let provider: OidcSignInProvider;

beforeAll(async () => {
  issuer = await LocalOidcIssuer.listen();
  await issuer.configure({ ...CLIENT, redirectUri: REDIRECT_URI });
  issuer.accounts.set('ada', { email: 'ada@example.test', email_verified: true, name: 'Ada Lovelace' });
  issuer.accounts.set('eve', { email: 'eve@example.test', email_verified: false, name: 'Eve' });
  provider = new OidcSignInProvider({ ...CLIENT, baseUrl: issuer.issuer, displayName: 'Local IdP' });
});
afterAll(async () => {
  await issuer?.close();
});

const random = () => randomBytes(32).toString('base64url');

/** A browser sign-in as `account`: the request values and the callback's parameters. */
async function authorize(account: string, options: { cancel?: boolean } = {}) {
  const request = { redirectUri: REDIRECT_URI, state: `google.${random()}`, codeVerifier: random(), nonce: random() };
  const url = await provider.authorizationUrl(request);
  const callback = await issuer.authorize(new TestBrowser(), url, account, options);
  expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
  return { request, url: new URL(url), parameters: Object.fromEntries(callback.searchParams) };
}

describe('OidcSignInProvider against a real OpenID Provider', () => {
  it('asks for openid email profile with PKCE (S256) and the nonce', async () => {
    const { request, url } = await authorize('ada');
    expect(url.origin).toBe(issuer.issuer);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: CLIENT.clientId,
      response_type: 'code',
      scope: 'openid email profile',
      redirect_uri: REDIRECT_URI,
      state: request.state,
      nonce: request.nonce,
      code_challenge_method: 'S256',
    });
    expect(url.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
  });

  it('exchanges the code and reads the verified email, the subject and the name from the ID token', async () => {
    const { request, parameters } = await authorize('ada');
    expect(parameters.iss).toBe(issuer.issuer);
    const profile = await provider.exchangeCode({ ...request, parameters });
    expect(profile).toMatchObject({
      providerUserId: 'ada',
      email: 'ada@example.test',
      emailVerified: true,
      name: 'Ada Lovelace',
      accessToken: expect.any(String),
    });
    expect(profile.scopes).toEqual(expect.arrayContaining(['openid', 'email']));
  });

  it('says when the issuer does not vouch for the email', async () => {
    const { request, parameters } = await authorize('eve');
    expect(await provider.exchangeCode({ ...request, parameters })).toMatchObject({
      email: 'eve@example.test',
      emailVerified: false,
    });
  });

  it('refuses an ID token for another nonce (invalid_id_token)', async () => {
    const { request, parameters } = await authorize('ada');
    await expect(provider.exchangeCode({ ...request, nonce: random(), parameters })).rejects.toMatchObject({
      code: 'invalid_id_token',
    });
  });

  it('refuses a callback naming another issuer (provider_mismatch)', async () => {
    const { request, parameters } = await authorize('ada');
    const error = await provider
      .exchangeCode({ ...request, parameters: { ...parameters, iss: 'https://evil.example' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error).toMatchObject({ code: 'provider_mismatch' });
  });

  it('refuses a wrong PKCE verifier and a used code (provider_error)', async () => {
    const { request, parameters } = await authorize('ada');
    await expect(provider.exchangeCode({ ...request, codeVerifier: random(), parameters })).rejects.toMatchObject({
      code: 'provider_error',
    });
    const second = await authorize('ada');
    await provider.exchangeCode({ ...second.request, parameters: second.parameters });
    await expect(provider.exchangeCode({ ...second.request, parameters: second.parameters })).rejects.toMatchObject({
      code: 'provider_error',
    });
  });

  it('reports a cancelled sign-in as access_denied', async () => {
    const { request, parameters } = await authorize('ada', { cancel: true });
    expect(parameters.error).toBe('access_denied');
    await expect(provider.exchangeCode({ ...request, parameters })).rejects.toMatchObject({ code: 'access_denied' });
  });

  it('answers provider_unavailable when discovery fails, and tries again next time', async () => {
    const unreachable = new OidcSignInProvider({ ...CLIENT, baseUrl: 'http://127.0.0.1:9', timeoutMs: 2000 });
    const request = { redirectUri: REDIRECT_URI, state: 's', codeVerifier: random(), nonce: random() };
    await expect(unreachable.authorizationUrl(request)).rejects.toBeInstanceOf(UnavailableError);
    await expect(unreachable.authorizationUrl(request)).rejects.toMatchObject({ code: 'provider_unavailable' });
  });

  it('refuses a plain-http issuer that is not on loopback', () => {
    expect(() => new OidcSignInProvider({ ...CLIENT, baseUrl: 'http://idp.example.com' })).toThrow(/https/);
    expect(new OidcSignInProvider(CLIENT).displayName).toBe('Google');
  });
});

describe('OidcSignInProvider and the ID token signature', () => {
  const ISSUER = 'https://idp.example.test';
  afterEach(() => {
    nock.cleanAll();
  });

  /** An issuer whose JWKS holds `published` while its ID token is signed with `signer`. */
  async function issuerSigningWith(options: { forge: boolean; claims?: Record<string, unknown> }) {
    const published = await generateKeyPair('RS256');
    const other = await generateKeyPair('RS256');
    const signer = options.forge ? other.privateKey : published.privateKey;
    const jwk = { ...(await exportJWK(published.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    const nonce = random();
    const idToken = await new SignJWT({
      nonce,
      email: 'ada@example.test',
      ...(options.claims ?? { email_verified: true }),
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(CLIENT.clientId)
      .setSubject('ada-1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(signer);
    nock(ISSUER)
      .get('/.well-known/openid-configuration')
      .reply(200, {
        issuer: ISSUER,
        authorization_endpoint: `${ISSUER}/authorize`,
        token_endpoint: `${ISSUER}/token`,
        jwks_uri: `${ISSUER}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      })
      .get('/jwks')
      .reply(200, { keys: [jwk] })
      .post('/token')
      .reply(200, { access_token: 'at-1', token_type: 'Bearer', expires_in: 300, id_token: idToken });
    return { nonce };
  }

  it('accepts an ID token signed with a key of the JWKS', async () => {
    const { nonce } = await issuerSigningWith({ forge: false });
    const idp = new OidcSignInProvider({ ...CLIENT, baseUrl: ISSUER });
    const request = { redirectUri: REDIRECT_URI, state: 'google.s', codeVerifier: random(), nonce };
    const url = new URL(await idp.authorizationUrl(request));
    expect(url.searchParams.get('code_challenge')).toBe(pkceChallenge(request.codeVerifier));
    const profile = await idp.exchangeCode({ ...request, parameters: { code: 'c', state: 'google.s' } });
    expect(profile).toMatchObject({ providerUserId: 'ada-1', email: 'ada@example.test', emailVerified: true });
  });

  it("takes Entra ID's xms_edov when the ID token has no email_verified", async () => {
    const { nonce } = await issuerSigningWith({ forge: false, claims: { xms_edov: true } });
    const idp = new OidcSignInProvider({ ...CLIENT, baseUrl: ISSUER });
    const request = { redirectUri: REDIRECT_URI, state: 'google.s', codeVerifier: random(), nonce };
    await idp.authorizationUrl(request);
    const profile = await idp.exchangeCode({ ...request, parameters: { code: 'c', state: 'google.s' } });
    expect(profile).toMatchObject({ email: 'ada@example.test', emailVerified: true });
  });

  it('refuses an ID token whose signature is not from the JWKS (invalid_id_token)', async () => {
    const { nonce } = await issuerSigningWith({ forge: true });
    const idp = new OidcSignInProvider({ ...CLIENT, baseUrl: ISSUER });
    const request = { redirectUri: REDIRECT_URI, state: 'google.s', codeVerifier: random(), nonce };
    await idp.authorizationUrl(request);
    await expect(idp.exchangeCode({ ...request, parameters: { code: 'c', state: 'google.s' } })).rejects.toMatchObject({
      code: 'invalid_id_token',
    });
  });
});
