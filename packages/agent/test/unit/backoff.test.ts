import { TrellisApiError, TrellisConnectionError } from '@trellis/client';
import { describe, expect, it } from 'vitest';
import { Backoff, isTransient } from '../../src/daemon/backoff.js';

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
    expect(isTransient(new TrellisApiError({ status: 401 }))).toBe(false);
    expect(isTransient(new TrellisApiError({ status: 409, code: 'job_finished' }))).toBe(false);
    expect(isTransient(new Error('bug'))).toBe(false);
  });
});
