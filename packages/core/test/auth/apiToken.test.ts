import { createHash } from 'node:crypto';
import {
  API_TOKEN_BYTES,
  apiTokenExpiry,
  generateApiToken,
  hashToken,
  isApiTokenForm,
  isApiTokenPrefixed,
  tokenMatchesHash,
} from '@trellis/core';
import { FakeRandom, SequenceRandom } from '@trellis/testkit/memory';
import { describe, expect, it } from 'vitest';

describe('API tokens', () => {
  it('are trt_ and 256 random bits from the Random port, in base64url', () => {
    expect(API_TOKEN_BYTES * 8).toBe(256);
    const bytes = Array.from({ length: 32 }, (_, i) => (i * 53 + 7) % 256);
    const token = generateApiToken(new SequenceRandom(bytes));
    expect(token).toBe(`trt_${Buffer.from(bytes).toString('base64url')}`);
    expect(token).toMatch(/^trt_[A-Za-z0-9_-]{43}$/);
    expect([...Buffer.from(token.slice(4), 'base64url')]).toEqual(bytes);
  });

  it('differ every time and have the exact form the server accepts', () => {
    const random = new FakeRandom('api tokens');
    const tokens = Array.from({ length: 100 }, () => generateApiToken(random));
    expect(new Set(tokens).size).toBe(100);
    for (const token of tokens) {
      expect(isApiTokenForm(token)).toBe(true);
      expect(isApiTokenPrefixed(token)).toBe(true);
    }
    expect(isApiTokenForm(`${tokens[0]}A`)).toBe(false);
    expect(isApiTokenForm(tokens[0]?.slice(0, -1))).toBe(false);
    expect(isApiTokenForm(`trw_${tokens[0]?.slice(4)}`)).toBe(false);
    expect(isApiTokenForm(`trt_${'+'.repeat(43)}`)).toBe(false);
    expect(isApiTokenForm(undefined)).toBe(false);
    // A CLI access token (a JWT) is routed the other way.
    expect(isApiTokenPrefixed('eyJhbGciOiJIUzI1NiJ9.e30.sig')).toBe(false);
  });

  it('are stored as SHA-256 hex and match only their own hash', () => {
    const random = new FakeRandom('hash');
    const token = generateApiToken(random);
    const other = generateApiToken(random);
    expect(hashToken(token)).toBe(createHash('sha256').update(token, 'utf8').digest('hex'));
    expect(tokenMatchesHash(token, hashToken(token))).toBe(true);
    expect(tokenMatchesHash(other, hashToken(token))).toBe(false);
  });

  it('expire a whole number of days after their creation', () => {
    const now = new Date('2026-02-27T12:34:56.789Z');
    expect(apiTokenExpiry(now, 1)).toBe('2026-02-28T12:34:56.789Z');
    expect(apiTokenExpiry(now, 365)).toBe('2027-02-27T12:34:56.789Z');
  });
});
