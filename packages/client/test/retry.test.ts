import { Backoff, isTransient, type RetryClock, retry, TrellisApiError, TrellisConnectionError } from '../src/index.js';
import { describe, expect, it } from 'vitest';

describe('jittered exponential backoff', () => {
  it('doubles each step up to the maximum, each delay between half the step and the step', () => {
    const low = new Backoff({ initialMs: 1000, maxMs: 8000, random: () => 0 });
    const high = new Backoff({ initialMs: 1000, maxMs: 8000, random: () => 0.999999 });
    expect(Array.from({ length: 6 }, () => low.next())).toEqual([500, 1000, 2000, 4000, 4000, 4000]);
    expect(Array.from({ length: 6 }, () => high.next())).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it('spreads agents that failed together', () => {
    const delays = new Set(Array.from({ length: 50 }, () => new Backoff({ initialMs: 1000 }).next()));
    expect(delays.size).toBeGreaterThan(10);
  });

  it('starts over after reset', () => {
    const backoff = new Backoff({ initialMs: 100, random: () => 0 });
    backoff.next();
    backoff.next();
    backoff.reset();
    expect(backoff.next()).toBe(50);
  });

  it('retries unreachable, overloaded or restarting servers, never refusals', () => {
    expect(isTransient(new TrellisConnectionError('http://x', new Error('ECONNREFUSED')))).toBe(true);
    expect(isTransient(new TrellisApiError({ status: 503 }))).toBe(true);
    expect(isTransient(new TrellisApiError({ status: 429 }))).toBe(true);
    // A full store stays full until someone frees space: the caller fails with it instead.
    expect(isTransient(new TrellisApiError({ status: 507, code: 'insufficient_storage' }))).toBe(false);
    expect(isTransient(new TrellisApiError({ status: 401 }))).toBe(false);
    expect(isTransient(new TrellisApiError({ status: 409, code: 'job_finished' }))).toBe(false);
    expect(isTransient(new Error('bug'))).toBe(false);
  });
});

/** A clock that never waits: each sleep records its delay and moves time on by it. */
function fakeClock(start = 1_000_000) {
  let now = start;
  const sleeps: number[] = [];
  const clock: RetryClock = {
    now: () => new Date(now),
    async sleep(ms, signal) {
      if (signal?.aborted) return false;
      sleeps.push(ms);
      now += ms;
      return true;
    },
  };
  return { clock, sleeps, elapsed: () => now - start };
}

const down = () => new TrellisConnectionError('http://x', new Error('ECONNREFUSED'));

describe('retry', () => {
  it('retries transient failures with growing jittered delays on the injected clock', async () => {
    const { clock, sleeps } = fakeClock();
    let calls = 0;
    const result = await retry(
      async (attempt) => {
        calls += 1;
        expect(attempt).toBe(calls - 1);
        if (calls < 5) throw down();
        return 'ok';
      },
      { clock, initialMs: 100, maxMs: 400, random: () => 0 },
    );
    expect(result).toBe('ok');
    expect(sleeps).toEqual([50, 100, 200, 200]);
  });

  it('throws a refusal at once', async () => {
    const { clock, sleeps } = fakeClock();
    const refusal = new TrellisApiError({ status: 403 });
    await expect(retry(() => Promise.reject(refusal), { clock })).rejects.toBe(refusal);
    expect(sleeps).toEqual([]);
  });

  it('gives up with the last error rather than wait past the timeout', async () => {
    const { clock, sleeps, elapsed } = fakeClock();
    const errors: unknown[] = [];
    const attempt = retry(
      () => {
        const error = down();
        errors.push(error);
        return Promise.reject(error);
      },
      { clock, timeoutMs: 10_000, initialMs: 1000, maxMs: 4000, random: () => 0.999 },
    );
    const thrown = await attempt.catch((error: unknown) => error);
    expect(thrown).toBe(errors.at(-1));
    expect(elapsed()).toBeLessThanOrEqual(10_000);
    expect(sleeps.length).toBeGreaterThan(1);
    expect(errors).toHaveLength(sleeps.length + 1);
  });

  it('stops after maxAttempts', async () => {
    const { clock, sleeps } = fakeClock();
    let calls = 0;
    await expect(
      retry(
        () => {
          calls += 1;
          return Promise.reject(down());
        },
        { clock, maxAttempts: 3 },
      ),
    ).rejects.toBeInstanceOf(TrellisConnectionError);
    expect(calls).toBe(3);
    expect(sleeps).toHaveLength(2);
  });

  it('stops waiting when the signal aborts, and never starts another attempt', async () => {
    const { clock } = fakeClock();
    const stop = new AbortController();
    let calls = 0;
    const onRetry: number[] = [];
    await expect(
      retry(
        () => {
          calls += 1;
          if (calls === 2) stop.abort();
          return Promise.reject(down());
        },
        { clock, signal: stop.signal, onRetry: (_error, delay) => onRetry.push(delay) },
      ),
    ).rejects.toBeInstanceOf(TrellisConnectionError);
    expect(calls).toBe(2);
    expect(onRetry).toHaveLength(1);
  });

  it('retries what `retryable` accepts and continues a shared backoff', async () => {
    const { clock, sleeps } = fakeClock();
    const backoff = new Backoff({ initialMs: 10, maxMs: 1000, random: () => 0 });
    backoff.next();
    let calls = 0;
    await retry(
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('anything');
      },
      { clock, backoff, retryable: () => true },
    );
    expect(sleeps).toEqual([10]);
    expect(isTransient(new Error('anything'))).toBe(false);
  });
});
