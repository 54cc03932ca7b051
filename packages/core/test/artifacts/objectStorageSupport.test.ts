import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  MeteredBody,
  normalizePrefix,
  objectNameForKey,
  TooLargeError,
  UnavailableError,
  ValidationError,
  verifiedArtifactBody,
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

  it('normalises prefixes', () => {
    expect(normalizePrefix('/a/b/')).toBe('a/b');
    expect(normalizePrefix('')).toBe('');
    expect(() => normalizePrefix('a/../b')).toThrow(ValidationError);
  });
});

describe('verifiedArtifactBody', () => {
  const chunks = ['first ', 'second ', 'last'].map((text) => Buffer.from(text));
  const whole = Buffer.concat(chunks);
  const recorded = { size: whole.length, sha256: createHash('sha256').update(whole).digest('hex') };

  async function drain(body: Readable): Promise<{ received: Buffer; error: unknown }> {
    const received: Buffer[] = [];
    try {
      for await (const chunk of body) received.push(chunk as Buffer);
    } catch (error) {
      return { received: Buffer.concat(received), error };
    }
    return { received: Buffer.concat(received), error: undefined };
  }

  it('passes the bytes on, chunk for chunk, when they match the record', async () => {
    const { received, error } = await drain(verifiedArtifactBody('k', Readable.from(chunks), whole.length, recorded));
    expect(error).toBeUndefined();
    expect(received.equals(whole)).toBe(true);
  });

  it('withholds the last chunk and fails with artifact_digest_mismatch when the bytes differ', async () => {
    const altered = ['first ', 'second ', 'lost'].map((text) => Buffer.from(text));
    const { received, error } = await drain(verifiedArtifactBody('k', Readable.from(altered), whole.length, recorded));
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error).toMatchObject({ code: 'artifact_digest_mismatch' });
    // The reader may get the chunks before the last, or lose them to the error; never 'lost'.
    expect('first second '.startsWith(received.toString())).toBe(true);
  });

  it('refuses a size that differs from the record before reading, and a body shorter than its size', async () => {
    const source = Readable.from(chunks);
    expect(() => verifiedArtifactBody('k', source, whole.length + 1, recorded)).toThrow(UnavailableError);
    expect(source.destroyed).toBe(true);
    const { error } = await drain(verifiedArtifactBody('k', Readable.from(chunks.slice(0, 2)), whole.length, recorded));
    expect(error).toMatchObject({ code: 'artifact_digest_mismatch' });
  });

  it('passes on an error of the source', async () => {
    const failing = new Readable({
      read() {
        this.destroy(new Error('connection reset'));
      },
    });
    const { error } = await drain(verifiedArtifactBody('k', failing, whole.length, recorded));
    expect(error).toMatchObject({ message: 'connection reset' });
  });
});
