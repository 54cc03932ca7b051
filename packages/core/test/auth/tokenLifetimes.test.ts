import {
  ACCESS_TOKEN_TTL_SECONDS,
  REFRESH_TOKEN_TTL_SECONDS,
  REQUIRED_CLAIMS,
  TOKEN_AUDIENCE,
  TOKEN_ISSUER,
  tokenClaims,
} from '@trellis/core';
import { describe, expect, it } from 'vitest';

const user = { id: '7d0f6e5e-1b7a-4c59-9d0c-3c4f1f7c2a11', email: 'ada@example.test' };
const now = new Date('2026-03-01T10:00:00.750Z');
const nowSeconds = Math.floor(now.getTime() / 1000);

describe('token lifetimes and claims', () => {
  it('access tokens live 1 hour and refresh tokens 90 days (SPEC §5.3)', () => {
    expect(ACCESS_TOKEN_TTL_SECONDS).toBe(3600);
    expect(REFRESH_TOKEN_TTL_SECONDS).toBe(90 * 24 * 3600);
  });

  it('issuer and audience are fixed', () => {
    expect(TOKEN_ISSUER).toBe('trellis');
    expect(TOKEN_AUDIENCE).toBe('trellis-cli');
    expect([...REQUIRED_CLAIMS].sort()).toEqual(['aud', 'email', 'exp', 'iss', 'sub', 'type']);
  });

  it('an access token carries sub, email, type access, iat and exp one hour later', () => {
    expect(tokenClaims('access', user, now)).toEqual({
      sub: user.id,
      email: user.email,
      type: 'access',
      iat: nowSeconds,
      exp: nowSeconds + 3600,
    });
  });

  it('a refresh token carries its record id and family and expires after 90 days', () => {
    const claims = tokenClaims('refresh', user, now, { jti: 'j1', fam: 'f1' });
    expect(claims).toEqual({
      sub: user.id,
      email: user.email,
      type: 'refresh',
      iat: nowSeconds,
      exp: nowSeconds + 7_776_000,
      jti: 'j1',
      fam: 'f1',
    });
  });

  it('times are whole seconds since the epoch', () => {
    const claims = tokenClaims('access', user, now);
    expect(Number.isInteger(claims.iat)).toBe(true);
    expect(Number.isInteger(claims.exp)).toBe(true);
  });
});
