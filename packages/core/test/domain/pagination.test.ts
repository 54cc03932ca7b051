import {
  DEFAULT_PAGE_LIMIT,
  decodeCursor,
  encodeCursor,
  MAX_PAGE_LIMIT,
  pageRequest,
  takePage,
  ValidationError,
} from '@trellis/core';
import { describe, expect, it } from 'vitest';

describe('pagination', () => {
  it('round-trips a page key through an opaque, URL-safe cursor', () => {
    const key = { at: '2026-11-23T21:00:00.123Z', seq: 42 };
    const cursor = encodeCursor(key);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual(key);
  });

  it.each([
    ['empty', ''],
    ['not base64url', 'abc$%'],
    ['not JSON', Buffer.from('nope').toString('base64url')],
    ['wrong shape', Buffer.from('{"at":1}').toString('base64url')],
    ['bad time', Buffer.from('["yesterday",1]').toString('base64url')],
    ['negative seq', Buffer.from('["2026-11-23T21:00:00.000Z",-1]').toString('base64url')],
    ['fractional seq', Buffer.from('["2026-11-23T21:00:00.000Z",1.5]').toString('base64url')],
    ['not a string', 17],
  ])('refuses a garbage cursor (%s) as validation_failed', (_name, cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(ValidationError);
    try {
      decodeCursor(cursor);
    } catch (error) {
      expect((error as ValidationError).code).toBe('validation_failed');
    }
  });

  it('defaults the limit to 50 and bounds it to 1..200', () => {
    expect(DEFAULT_PAGE_LIMIT).toBe(50);
    expect(MAX_PAGE_LIMIT).toBe(200);
    expect(pageRequest({})).toEqual({ limit: 50 });
    expect(pageRequest({ limit: '200' })).toEqual({ limit: 200 });
    expect(pageRequest({ limit: 1 })).toEqual({ limit: 1 });
    for (const limit of [0, '0', 201, '201', '-1', '2.5', 'ten', ['1', '2']]) {
      expect(() => pageRequest({ limit }), String(limit)).toThrow(ValidationError);
    }
    expect(() => pageRequest({ limit: 60 }, { defaultLimit: 10, maxLimit: 50 })).toThrow(ValidationError);
    expect(pageRequest({}, { defaultLimit: 10, maxLimit: 50 })).toEqual({ limit: 10 });
  });

  it('takes pages strictly after the key, newest first, with ties broken by insertion', () => {
    const at = '2026-11-23T21:00:00.000Z';
    const later = '2026-11-23T21:00:01.000Z';
    const rows = [
      { at: later, seq: 3 },
      { at: later, seq: 1 },
      { at, seq: 4 },
      { at, seq: 2 },
    ];
    const seen: number[] = [];
    let after: { at: string; seq: number } | undefined;
    for (;;) {
      const page = takePage(rows, (row) => row, after === undefined ? { limit: 1 } : { limit: 1, after });
      seen.push(...page.items.map((row) => row.seq));
      if (page.next === null) break;
      after = page.next;
    }
    expect(seen).toEqual([3, 1, 4, 2]);
  });
});
