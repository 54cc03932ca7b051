import { createHash } from 'node:crypto';
import { generateWorkerToken, hashToken, tokenMatchesHash, WORKER_TOKEN_BYTES } from '@trellis/core';
import { FakeRandom, SequenceRandom } from '@trellis/testkit/memory';
import { describe, expect, it } from 'vitest';

describe('worker tokens', () => {
  it('carry at least 256 random bits from the Random port', () => {
    expect(WORKER_TOKEN_BYTES * 8).toBeGreaterThanOrEqual(256);
    const bytes = Array.from({ length: 32 }, (_, i) => (i * 37 + 11) % 256);
    const token = generateWorkerToken(new SequenceRandom(bytes));
    expect(token).toBe(`trw_${Buffer.from(bytes).toString('base64url')}`);
    const decoded = Buffer.from(token.slice(4), 'base64url');
    expect(decoded.length).toBeGreaterThanOrEqual(32);
    expect([...decoded]).toEqual(bytes);
  });

  it('are URL- and header-safe and differ every time', () => {
    const random = new FakeRandom('tokens');
    const tokens = Array.from({ length: 100 }, () => generateWorkerToken(random));
    for (const token of tokens) expect(token).toMatch(/^trw_[A-Za-z0-9_-]{43}$/);
    expect(new Set(tokens).size).toBe(100);
  });

  it('are stored as the lowercase hex SHA-256 of the token', () => {
    const token = 'trw_example';
    expect(hashToken(token)).toBe(createHash('sha256').update(token, 'utf8').digest('hex'));
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken(token)).not.toContain(token);
  });

  it('match their own hash only', () => {
    const random = new FakeRandom('match');
    const token = generateWorkerToken(random);
    const other = generateWorkerToken(random);
    expect(tokenMatchesHash(token, hashToken(token))).toBe(true);
    expect(tokenMatchesHash(other, hashToken(token))).toBe(false);
    expect(tokenMatchesHash(`${token}x`, hashToken(token))).toBe(false);
    expect(tokenMatchesHash('', hashToken(token))).toBe(false);
  });

  it('accept an upper-case stored hash but refuse a truncated or malformed one', () => {
    const token = 'trw_abc';
    expect(tokenMatchesHash(token, hashToken(token).toUpperCase())).toBe(true);
    expect(tokenMatchesHash(token, hashToken(token).slice(0, 62))).toBe(false);
    expect(tokenMatchesHash(token, 'not hex at all')).toBe(false);
    expect(tokenMatchesHash(token, '')).toBe(false);
  });
});
