import { createHmac } from 'node:crypto';
import { TOKEN_AUDIENCE, TOKEN_ISSUER, type TokenClaims, tokenClaims, UnauthorizedError } from '@trellis/core';
import { FakeClock, FakeTokenSigner } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';

const SECRET = 'a-secret-that-is-long-enough-for-hs256!';
const user = { id: '7d0f6e5e-1b7a-4c59-9d0c-3c4f1f7c2a11', email: 'ada@example.test' };

let clock: FakeClock;
let signer: FakeTokenSigner;
beforeEach(() => {
  clock = new FakeClock('2026-02-01T00:00:00.000Z');
  signer = new FakeTokenSigner(clock, SECRET);
});

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** A token signed with `secret`, with any header and payload. */
function forge(header: unknown, payload: unknown, secret = SECRET): string {
  const body = `${b64(header)}.${b64(payload)}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

function expectRefused(token: string, type: 'access' | 'refresh' = 'access'): void {
  let thrown: unknown;
  try {
    signer.verify(token, type);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(UnauthorizedError);
  expect(thrown).toMatchObject({ code: 'invalid_token' });
}

describe('FakeTokenSigner', () => {
  it('signs an HS256 JWT with iss and aud, verifiable with the secret', () => {
    const claims = tokenClaims('access', user, clock.now());
    const token = signer.sign(claims);
    const [header, payload, signature] = token.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(JSON.parse(Buffer.from(payload!, 'base64url').toString())).toEqual({
      ...claims,
      iss: TOKEN_ISSUER,
      aud: TOKEN_AUDIENCE,
    });
    expect(signature).toBe(createHmac('sha256', SECRET).update(`${header}.${payload}`).digest('base64url'));
    expect(signer.verify(token, 'access')).toEqual(claims);
  });

  it('keeps jti and fam of a refresh token', () => {
    const claims = tokenClaims('refresh', user, clock.now(), { jti: 'j', fam: 'f' });
    expect(signer.verify(signer.sign(claims), 'refresh')).toEqual(claims);
  });

  it('refuses a token of the other type', () => {
    expectRefused(signer.sign(tokenClaims('refresh', user, clock.now(), { jti: 'j', fam: 'f' })), 'access');
    expectRefused(signer.sign(tokenClaims('access', user, clock.now())), 'refresh');
  });

  it('refuses a token once the clock reaches exp', () => {
    const token = signer.sign(tokenClaims('access', user, clock.now()));
    clock.advance({ seconds: 3599 });
    expect(signer.verify(token, 'access').sub).toBe(user.id);
    clock.advance({ seconds: 1 });
    expectRefused(token);
  });

  it('refuses another secret, a changed payload and a changed signature', () => {
    const claims = { ...tokenClaims('access', user, clock.now()), iss: TOKEN_ISSUER, aud: TOKEN_AUDIENCE };
    expectRefused(forge({ alg: 'HS256', typ: 'JWT' }, claims, 'another-secret-another-secret-another'));
    const token = signer.sign(tokenClaims('access', user, clock.now()));
    const [header, , signature] = token.split('.');
    expectRefused(`${header}.${b64({ ...claims, sub: 'someone-else' })}.${signature}`);
    expectRefused(`${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`);
    expect(signer.verify(forge({ alg: 'HS256', typ: 'JWT' }, claims), 'access').sub).toBe(user.id);
  });

  it('refuses alg none and other algorithms', () => {
    const claims = { ...tokenClaims('access', user, clock.now()), iss: TOKEN_ISSUER, aud: TOKEN_AUDIENCE };
    expectRefused(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`);
    expectRefused(forge({ alg: 'HS512', typ: 'JWT' }, claims));
    expectRefused(forge({ typ: 'JWT' }, claims));
  });

  it('refuses a wrong issuer or audience and missing claims', () => {
    const claims: Record<string, unknown> = {
      ...tokenClaims('access', user, clock.now()),
      iss: TOKEN_ISSUER,
      aud: TOKEN_AUDIENCE,
    };
    expectRefused(forge({ alg: 'HS256' }, { ...claims, iss: 'someone' }));
    expectRefused(forge({ alg: 'HS256' }, { ...claims, aud: 'trellis-web' }));
    expectRefused(forge({ alg: 'HS256' }, { ...claims, aud: [TOKEN_AUDIENCE, 'x'] }));
    for (const claim of ['sub', 'email', 'type', 'iss', 'aud', 'exp']) {
      const { [claim]: _dropped, ...rest } = claims;
      expectRefused(forge({ alg: 'HS256' }, rest));
    }
    expectRefused(forge({ alg: 'HS256' }, { ...claims, exp: String(claims.exp) }));
  });

  it('refuses malformed tokens', () => {
    for (const token of ['', 'a', 'a.b', 'a.b.c.d', '!!.??.**', `${b64({ alg: 'HS256' })}.not-json.sig`]) {
      expectRefused(token);
    }
    expectRefused(undefined as unknown as string);
  });

  it('tokens of two signers with different secrets do not cross', () => {
    const other = new FakeTokenSigner(clock, 'x'.repeat(40));
    const claims: TokenClaims = tokenClaims('access', user, clock.now());
    expect(() => other.verify(signer.sign(claims), 'access')).toThrow(UnauthorizedError);
  });
});
