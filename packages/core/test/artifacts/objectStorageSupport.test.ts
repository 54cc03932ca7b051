import { createHash } from 'node:crypto';
import {
  MeteredBody,
  normalizePrefix,
  objectNameForKey,
  stagingName,
  TooLargeError,
  ValidationError,
} from '@trellis/core';
import { describe, expect, it } from 'vitest';

async function* chunks(parts: string[], pulled: { count: number }, closed: { value: boolean }) {
  try {
    for (const part of parts) {
      pulled.count += 1;
      yield Buffer.from(part);
    }
  } finally {
    closed.value = true;
  }
}

describe('MeteredBody', () => {
  it('counts and hashes the body as it is pulled', async () => {
    const meter = new MeteredBody(chunks(['ab', 'cd', 'e'], { count: 0 }, { value: false }), 10);
    const seen: string[] = [];
    for (let chunk = await meter.next(); chunk !== null; chunk = await meter.next())
      seen.push(Buffer.from(chunk).toString());
    expect(seen).toEqual(['ab', 'cd', 'e']);
    expect([meter.size, meter.complete]).toEqual([5, true]);
    expect(meter.digest()).toBe(createHash('sha256').update('abcde').digest('hex'));
  });

  it('stops at the first chunk past the limit and closes the source', async () => {
    const pulled = { count: 0 };
    const closed = { value: false };
    const meter = new MeteredBody(chunks(['abc', 'def', 'ghi', 'jkl'], pulled, closed), 5);
    await expect(async () => {
      while ((await meter.next()) !== null);
    }).rejects.toBeInstanceOf(TooLargeError);
    expect([pulled.count, closed.value, meter.complete]).toEqual([2, true, false]);
  });

  it('hands copies from readHead and rest, so the producer may reuse its buffer', async () => {
    const shared = Buffer.from('xx');
    async function* reusing() {
      for (const letter of ['a', 'b', 'c']) {
        shared.write(letter.repeat(2));
        yield shared;
      }
    }
    const meter = new MeteredBody(reusing(), 100);
    const head = await meter.readHead(1);
    const all: string[] = [];
    for await (const chunk of meter.rest(head)) all.push(chunk.toString());
    expect(all).toEqual(['aa', 'bb', 'cc']);
  });
});

describe('object names of artifact keys', () => {
  it('puts keys below the prefix and refuses unsafe or reserved ones', () => {
    expect(objectNameForKey('trellis', 'plans/a/b')).toBe('trellis/plans/a/b');
    expect(objectNameForKey('', 'plans/a')).toBe('plans/a');
    for (const key of ['', 'a//b', '../x', 'a/./b', 'a\\b', '.trellis-staging/x', `a${'\u0001'}`]) {
      expect(() => objectNameForKey('p', key), JSON.stringify(key)).toThrow(ValidationError);
    }
    expect(() => objectNameForKey('p', 'x'.repeat(1100))).toThrow(/1024 bytes/);
  });

  it('normalises prefixes and names staging objects', () => {
    expect(normalizePrefix('/a/b/')).toBe('a/b');
    expect(normalizePrefix('')).toBe('');
    expect(() => normalizePrefix('a/../b')).toThrow(ValidationError);
    expect(stagingName('a', 'id')).toBe('a/.trellis-staging/id');
    expect(stagingName('', 'id')).toBe('.trellis-staging/id');
  });
});
