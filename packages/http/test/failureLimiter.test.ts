/**
 * The failure limiter's bearer rule (issue 31): a secret that verified from an address in this
 * process goes straight to its verification, with no read of the shared count; everything else is
 * checked against the count first, and refused once the address is blocked.
 */
import { MemoryRateLimitStore, type RateLimitStore, UnauthorizedError } from '@trellis/core';
import { FailureLimiter } from '@trellis/http';
import { FakeClock } from '@trellis/testkit';
import { describe, expect, it } from 'vitest';

/** The memory store, counting the reads of a count (what each request would cost the database). */
class CountingStore implements RateLimitStore {
  reads = 0;
  private readonly inner = new MemoryRateLimitStore();
  get: RateLimitStore['get'] = (key, now) => {
    this.reads += 1;
    return this.inner.get(key, now);
  };
  hit: RateLimitStore['hit'] = (key, now, windowSeconds) => this.inner.hit(key, now, windowSeconds);
  undo: RateLimitStore['undo'] = (key, at) => this.inner.undo(key, at);
  reset: RateLimitStore['reset'] = (key) => this.inner.reset(key);
}

function limiter() {
  const store = new CountingStore();
  const clock = new FakeClock(new Date('2026-11-28T00:00:00Z'));
  return { store, clock, failures: new FailureLimiter('tfe-auth', { limit: 3, windowSeconds: 600 }, store, clock) };
}

const GOOD = 'trt_the-right-token';
const accept = (secret: string | null) => async () => {
  if (secret !== GOOD) throw new UnauthorizedError('invalid_token', 'the token is not valid');
  return 'ada';
};
const code = (promise: Promise<unknown>) =>
  promise.then(
    () => 'passed',
    (error: { code?: string }) => error.code,
  );

describe('FailureLimiter.limitBearer', () => {
  it('reads the count for a secret not verified yet, then not again for it from that address', async () => {
    const { store, failures } = limiter();
    expect(await failures.limitBearer('10.0.0.1', GOOD, accept(GOOD))).toBe('ada');
    expect(store.reads).toBe(1);
    for (let i = 0; i < 5; i++) await failures.limitBearer('10.0.0.1', GOOD, accept(GOOD));
    expect(store.reads).toBe(1);
    // Another address, or no secret at all, is counted as before.
    await failures.limitBearer('10.0.0.2', GOOD, accept(GOOD));
    await code(failures.limitBearer('10.0.0.1', null, accept(null)));
    expect(store.reads).toBe(3);
  });

  it('blocks guessers at an address while a secret verified there keeps working', async () => {
    const { failures } = limiter();
    await failures.limitBearer('10.0.0.1', GOOD, accept(GOOD));
    for (let i = 0; i < 3; i++)
      expect(await code(failures.limitBearer('10.0.0.1', `guess-${i}`, accept(`guess-${i}`)))).toBe('invalid_token');
    expect(await code(failures.limitBearer('10.0.0.1', 'guess-again', accept('guess-again')))).toBe('rate_limited');
    expect(await code(failures.limitBearer('10.0.0.1', null, accept(null)))).toBe('rate_limited');
    expect(await code(failures.limitBearer('10.0.0.1', GOOD, accept(GOOD)))).toBe('passed');
    // The right secret never verified from the blocked address waits like any other.
    const other = limiter();
    for (let i = 0; i < 3; i++) await code(other.failures.limitBearer('10.0.0.1', `guess-${i}`, accept(`guess-${i}`)));
    expect(await code(other.failures.limitBearer('10.0.0.1', GOOD, accept(GOOD)))).toBe('rate_limited');
  });

  it('forgets a remembered secret once it is refused (revoked), and counts that failure', async () => {
    const { store, failures } = limiter();
    await failures.limitBearer('10.0.0.1', GOOD, accept(GOOD));
    expect(await code(failures.limitBearer('10.0.0.1', GOOD, accept(null)))).toBe('invalid_token');
    const reads = store.reads;
    await code(failures.limitBearer('10.0.0.1', GOOD, accept(null)));
    expect(store.reads).toBe(reads + 1);
    for (let i = 0; i < 2; i++) await code(failures.limitBearer('10.0.0.1', GOOD, accept(null)));
    expect(await code(failures.limitBearer('10.0.0.1', GOOD, accept(GOOD)))).toBe('rate_limited');
  });

  it('checks the count again an hour after the secret last verified there', async () => {
    const { store, clock, failures } = limiter();
    await failures.limitBearer('10.0.0.1', GOOD, accept(GOOD));
    clock.advance({ minutes: 59 });
    await failures.limitBearer('10.0.0.1', GOOD, accept(GOOD));
    expect(store.reads).toBe(1);
    clock.advance({ minutes: 2 });
    await failures.limitBearer('10.0.0.1', GOOD, accept(GOOD));
    expect(store.reads).toBe(2);
  });
});
