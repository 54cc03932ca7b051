import { RateLimitedError } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { ClaimLongPolls } from '../src/index.js';

function refusal(take: () => unknown): RateLimitedError {
  try {
    take();
  } catch (error) {
    if (error instanceof RateLimitedError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('claim long-poll slots', () => {
  it('gives each worker its share and the server its total, and frees slots when polls end', () => {
    const polls = new ClaimLongPolls({ perWorker: 2, total: 3 });
    const a1 = polls.acquire('a');
    polls.acquire('a');
    expect(refusal(() => polls.acquire('a'))).toMatchObject({ code: 'too_many_long_polls', retryAfterSeconds: 1 });
    const b1 = polls.acquire('b');
    // The server is full: a worker with slots to spare is refused too.
    expect(refusal(() => polls.acquire('c')).code).toBe('too_many_long_polls');
    expect([polls.count(), polls.count('a'), polls.count('b')]).toEqual([3, 2, 1]);
    a1();
    a1(); // releasing twice frees one slot only
    expect([polls.count(), polls.count('a')]).toEqual([2, 1]);
    polls.acquire('c');
    b1();
    expect([polls.count(), polls.count('b'), polls.count('c')]).toEqual([2, 0, 1]);
  });
});
