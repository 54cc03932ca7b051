import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  type ArtifactStore,
  InsufficientStorageError,
  NotFoundError,
  TooLargeError,
  ValidationError,
} from '@trellis/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const MiB = 1024 * 1024;
const PLAN_LIMIT = 50 * MiB;
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const ABC_SHA256 = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
/**
 * How far past the limit an adapter may read before it notices: adapters that hand the body to an
 * SDK through a `Readable` pull a little ahead. It is tiny next to the 1 GiB the body could yield.
 */
const READ_AHEAD_ALLOWANCE = 8 * MiB;

export interface ArtifactStoreHarness {
  store: ArtifactStore;
  /** Releases the store and removes everything it wrote (temp dir, bucket). */
  close(): Promise<void>;
}

/** A store whose storage a test can really fill (the filesystem store on a small tmpfs). */
export interface FullStorageHarness extends ArtifactStoreHarness {
  /** Fills the storage under the store so that at most `leaveBytes` stay free. */
  fill(leaveBytes: number): Promise<void>;
  /** Frees what `fill` took. */
  free(): Promise<void>;
}

/**
 * Issue 30: a full store refuses a put with `InsufficientStorageError` (`507
 * insufficient_storage`), shows nothing of the refused object, keeps every earlier one whole and
 * takes puts again once space is freed. Only for adapters whose storage a test can really fill
 * (a filled disk, not a mocked error): today the filesystem store on a tmpfs. `open` returns an
 * empty store on storage with at least 4 MiB free.
 */
export function describeFullStorageConformance(name: string, open: () => Promise<FullStorageHarness>): void {
  describe(`ArtifactStore conformance, storage full: ${name}`, () => {
    let harness: FullStorageHarness | undefined;

    beforeEach(async () => {
      harness = await open();
    });

    afterEach(async () => {
      await harness?.close();
      harness = undefined;
    });

    it('refuses a put that does not fit as insufficient_storage, stores nothing, keeps earlier objects, and takes puts again once space is freed', async () => {
      const { store } = harness as FullStorageHarness;
      await store.put('full/earlier', bodyOf(61, 256 * 1024), { maxBytes: PLAN_LIMIT });
      await (harness as FullStorageHarness).fill(256 * 1024);

      const refused = await rejectionOf(store.put('full/new', bodyOf(62, 2 * MiB), { maxBytes: PLAN_LIMIT }));
      expect(refused).toBeInstanceOf(InsufficientStorageError);
      expect(refused).toMatchObject({ code: 'insufficient_storage' });
      await expectNotFound(store.get('full/new'));

      // A replacement that does not fit leaves the earlier object whole.
      const replaced = await rejectionOf(store.put('full/earlier', bodyOf(63, 2 * MiB), { maxBytes: PLAN_LIMIT }));
      expect(replaced).toMatchObject({ code: 'insufficient_storage' });
      await expectStoredObject(store, 'full/earlier', 61, 256 * 1024);

      await (harness as FullStorageHarness).free();
      await expect(store.put('full/new', bodyOf(62, 2 * MiB), { maxBytes: PLAN_LIMIT })).resolves.toEqual({
        size: 2 * MiB,
        sha256: sha256Of(62, 2 * MiB),
      });
      await expectStoredObject(store, 'full/new', 62, 2 * MiB);
      await expectStoredObject(store, 'full/earlier', 61, 256 * 1024);
    });
  });
}

/**
 * The behaviour every `ArtifactStore` adapter (fs, S3, GCS) must show. `open` is called before each
 * test and must return an empty store of its own.
 */
export function describeArtifactStoreConformance(name: string, open: () => Promise<ArtifactStoreHarness>): void {
  describe(`ArtifactStore conformance: ${name}`, () => {
    let harness: ArtifactStoreHarness | undefined;
    let store: ArtifactStore;

    beforeEach(async () => {
      harness = await open();
      store = harness.store;
    });

    afterEach(async () => {
      await harness?.close();
      harness = undefined;
    });

    const planKey = (job: number) => `plans/8f0f4c1e-1111-4b5e-9c55-00000000000${job}/job-${job}/terraform.plan.out`;

    describe('round trip', () => {
      it('stores and returns an empty object', async () => {
        const stored = await store.put('empty/object', chunksOf(), { maxBytes: PLAN_LIMIT });
        expect(stored).toEqual({ size: 0, sha256: EMPTY_SHA256 });
        const got = await store.get('empty/object');
        expect(got.size).toBe(0);
        expect(await readAll(got.body)).toHaveLength(0);
      });

      it('reports the sha256 of the bytes as lowercase hex on put, and returns the bytes on get', async () => {
        const stored = await store.put('small/abc', chunksOf('a', 'bc'), { maxBytes: PLAN_LIMIT });
        expect(stored).toEqual({ size: 3, sha256: ABC_SHA256 });
        const got = await store.get('small/abc');
        expect(got.size).toBe(3);
        expect((await readAll(got.body)).toString()).toBe('abc');
      });

      it('round-trips a small object sent in odd-sized chunks under a plan artifact key', async () => {
        const size = 300_001;
        const stored = await store.put(planKey(1), bodyOf(11, size, 777), { maxBytes: PLAN_LIMIT });
        expect(stored).toEqual({ size, sha256: sha256Of(11, size) });
        await expectStoredObject(store, planKey(1), 11, size);
      });

      it('round-trips a 50 MiB object, the plan artifact limit, byte for byte', async () => {
        const stored = await store.put(planKey(2), bodyOf(12, PLAN_LIMIT), { maxBytes: PLAN_LIMIT });
        expect(stored).toEqual({ size: PLAN_LIMIT, sha256: sha256Of(12, PLAN_LIMIT) });
        await expectStoredObject(store, planKey(2), 12, PLAN_LIMIT);
      });

      it('keeps a key, a key below it and a sibling with a common prefix apart', async () => {
        await store.put('tree/a', bodyOf(21, 1000), { maxBytes: MiB });
        await store.put('tree/a/b', bodyOf(22, 2000), { maxBytes: MiB });
        await store.put('tree/ab', bodyOf(23, 3000), { maxBytes: MiB });
        await expectStoredObject(store, 'tree/a', 21, 1000);
        await expectStoredObject(store, 'tree/a/b', 22, 2000);
        await expectStoredObject(store, 'tree/ab', 23, 3000);
        await store.delete('tree/a');
        await expectNotFound(store.get('tree/a'));
        await expectStoredObject(store, 'tree/a/b', 22, 2000);
      });
    });

    describe('size limit, enforced while streaming', () => {
      it('accepts exactly maxBytes and refuses one byte more', async () => {
        await expect(store.put('limit/exact', bodyOf(31, MiB), { maxBytes: MiB })).resolves.toEqual({
          size: MiB,
          sha256: sha256Of(31, MiB),
        });
        const error = await rejectionOf(store.put('limit/over', bodyOf(31, MiB + 1), { maxBytes: MiB }));
        expectTooLarge(error, MiB);
        await expectNotFound(store.get('limit/over'));
      });

      it('stops pulling a body far over the limit and stores nothing', async () => {
        const huge = new CountingBody(64 * 1024, 1024 * MiB);
        const error = await rejectionOf(store.put('limit/huge', huge, { maxBytes: 2 * MiB }));
        expectTooLarge(error, 2 * MiB);
        expect(huge.pulledBytes).toBeGreaterThan(2 * MiB);
        expect(huge.pulledBytes).toBeLessThanOrEqual(2 * MiB + READ_AHEAD_ALLOWANCE);
        expect(huge.closed, 'the body iterator is closed so the producer can stop').toBe(true);
        await expectNotFound(store.get('limit/huge'));
      });

      it('leaves the earlier object under the key intact', async () => {
        await store.put(planKey(3), bodyOf(33, 3 * MiB), { maxBytes: 4 * MiB });
        const huge = new CountingBody(64 * 1024, 1024 * MiB);
        expectTooLarge(await rejectionOf(store.put(planKey(3), huge, { maxBytes: 4 * MiB })), 4 * MiB);
        expect(huge.pulledBytes).toBeLessThanOrEqual(4 * MiB + READ_AHEAD_ALLOWANCE);
        await expectStoredObject(store, planKey(3), 33, 3 * MiB);
      });
    });

    describe('failing bodies', () => {
      it('propagates an error thrown by the body mid-way and stores nothing', async () => {
        const failure = new Error('client went away');
        await expect(
          store.put('fail/new', failingBody(41, 3 * MiB, failure), { maxBytes: PLAN_LIMIT }),
        ).rejects.toThrow('client went away');
        await expectNotFound(store.get('fail/new'));
      });

      it('leaves the earlier object under the key intact', async () => {
        await store.put(planKey(4), bodyOf(42, 2 * MiB), { maxBytes: PLAN_LIMIT });
        const failure = new Error('client went away');
        await expect(
          store.put(planKey(4), failingBody(43, 3 * MiB, failure), { maxBytes: PLAN_LIMIT }),
        ).rejects.toThrow('client went away');
        await expectStoredObject(store, planKey(4), 42, 2 * MiB);
      });
    });

    describe('replace and delete', () => {
      it('overwrite replaces the whole object, leaving no tail of a longer one', async () => {
        await store.put('replace/me', bodyOf(51, 3 * MiB), { maxBytes: PLAN_LIMIT });
        const stored = await store.put('replace/me', bodyOf(52, MiB + 5), { maxBytes: PLAN_LIMIT });
        expect(stored).toEqual({ size: MiB + 5, sha256: sha256Of(52, MiB + 5) });
        await expectStoredObject(store, 'replace/me', 52, MiB + 5);
      });

      it('keeps showing the earlier object while a replacement is still being written', async () => {
        await store.put('replace/slow', bodyOf(53, MiB), { maxBytes: PLAN_LIMIT });
        const gate = new Gate();
        const writing = store.put('replace/slow', gatedBody(54, 2 * MiB, gate), { maxBytes: PLAN_LIMIT });
        try {
          await Promise.race([gate.reached, writing]);
          await expectStoredObject(store, 'replace/slow', 53, MiB);
        } finally {
          gate.open();
        }
        await writing;
        await expectStoredObject(store, 'replace/slow', 54, 2 * MiB);
      });

      it('get of a key never written is NotFoundError', async () => {
        await expectNotFound(store.get('missing/never-written'));
      });

      it('delete removes the object: get is then NotFoundError', async () => {
        await store.put('delete/me', bodyOf(55, 1000), { maxBytes: MiB });
        await store.delete('delete/me');
        await expectNotFound(store.get('delete/me'));
      });

      it("refuses keys that break core's key rules, the same in every store", async () => {
        const bad = ['', '/abs', 'a//b', 'a/', 'a/./b', 'a/../b', 'a\\b', 'a\u0001b', 'a\nb', '.trellis-staging/x'];
        for (const key of bad) {
          const refusal = await rejectionOf(store.put(key, bodyOf(57, 10), { maxBytes: MiB }));
          expect(refusal, JSON.stringify(key)).toBeInstanceOf(ValidationError);
          expect(refusal, JSON.stringify(key)).toMatchObject({ code: 'invalid_artifact_key' });
          await expect(store.get(key), JSON.stringify(key)).rejects.toMatchObject({ code: 'invalid_artifact_key' });
        }
      });

      it('delete of a missing key succeeds, also twice', async () => {
        await expect(store.delete('delete/never-written')).resolves.toBeUndefined();
        await store.put('delete/twice', bodyOf(56, 10), { maxBytes: MiB });
        await store.delete('delete/twice');
        await expect(store.delete('delete/twice')).resolves.toBeUndefined();
      });
    });

    describe('concurrency', () => {
      it('10 concurrent puts of different keys all round-trip', async () => {
        const uploads = Array.from({ length: 10 }, (_, i) => ({
          key: `concurrent/${i}/object`,
          seed: 100 + i,
          size: 3 * MiB + i * 4099,
        }));
        const results = await Promise.all(
          uploads.map((u) => store.put(u.key, bodyOf(u.seed, u.size), { maxBytes: PLAN_LIMIT })),
        );
        results.forEach((result, i) => {
          const u = uploads[i]!;
          expect(result).toEqual({ size: u.size, sha256: sha256Of(u.seed, u.size) });
        });
        for (const u of uploads) await expectStoredObject(store, u.key, u.seed, u.size);
      });

      it('concurrent puts to one key end with one complete, consistent object', async () => {
        const writers = Array.from({ length: 6 }, (_, i) => ({ seed: 200 + i, size: MiB + i * 65_537 }));
        const results = await Promise.all(
          writers.map((w) => store.put('concurrent/same', bodyOf(w.seed, w.size), { maxBytes: PLAN_LIMIT })),
        );
        results.forEach((result, i) => {
          expect(result).toEqual({ size: writers[i]!.size, sha256: sha256Of(writers[i]!.seed, writers[i]!.size) });
        });
        const got = await store.get('concurrent/same');
        // Every writer's size differs, so the size names the one whose bytes must be there, whole.
        const winner = writers.find((w) => w.size === got.size);
        expect(winner, 'the stored size is that of one of the writers').toBeDefined();
        await expectBodyMatches(got.body, winner!.seed, winner!.size);
      });
    });

    it('check() succeeds on a healthy store', async () => {
      await expect(store.check()).resolves.toBeUndefined();
    });
  });
}

/**
 * Deterministic pseudo-random bytes (xorshift32 from `seed`; the same bytes whatever the chunk
 * size), in fresh chunks of `chunkSize` (the last one shorter), so a test can regenerate any
 * object instead of keeping it in memory.
 */
export function* deterministicChunks(seed: number, size: number, chunkSize = 64 * 1024): Generator<Buffer> {
  const blocks = xorshiftBlocks(seed);
  let block: Buffer = Buffer.alloc(0);
  for (let offset = 0; offset < size; offset += chunkSize) {
    const chunk = Buffer.allocUnsafe(Math.min(chunkSize, size - offset));
    let filled = 0;
    while (filled < chunk.length) {
      if (block.length === 0) block = blocks.next().value;
      const n = block.copy(chunk, filled, 0, Math.min(block.length, chunk.length - filled));
      block = block.subarray(n);
      filled += n;
    }
    yield chunk;
  }
}

function* xorshiftBlocks(seed: number): Generator<Buffer, never> {
  let state = seed >>> 0 || 0x9e3779b9;
  const words = new Uint32Array(16 * 1024);
  const bytes = Buffer.from(words.buffer);
  for (;;) {
    for (let i = 0; i < words.length; i += 1) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      state >>>= 0;
      words[i] = state;
    }
    yield bytes;
  }
}

async function* bodyOf(seed: number, size: number, chunkSize?: number): AsyncGenerator<Uint8Array> {
  yield* deterministicChunks(seed, size, chunkSize);
}

async function* chunksOf(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield Buffer.from(part);
}

/** Yields `size` bytes of `seed`'s data up to about half-way, then throws `failure`. */
async function* failingBody(seed: number, size: number, failure: Error): AsyncGenerator<Uint8Array> {
  let sent = 0;
  for (const chunk of deterministicChunks(seed, size)) {
    if (sent >= size / 2) throw failure;
    sent += chunk.length;
    yield chunk;
  }
}

class Gate {
  open!: () => void;
  readonly opened = new Promise<void>((resolve) => {
    this.open = resolve;
  });
  reachedNow!: () => void;
  readonly reached = new Promise<void>((resolve) => {
    this.reachedNow = resolve;
  });
}

/** Yields the first chunk, then waits for the gate before yielding the rest. */
async function* gatedBody(seed: number, size: number, gate: Gate): AsyncGenerator<Uint8Array> {
  let first = true;
  for (const chunk of deterministicChunks(seed, size)) {
    yield chunk;
    if (first) {
      first = false;
      gate.reachedNow();
      await gate.opened;
    }
  }
}

/** A body that could yield `totalBytes`, counting what was actually pulled. */
class CountingBody implements AsyncIterable<Uint8Array> {
  pulledBytes = 0;
  closed = false;
  constructor(
    private readonly chunkSize: number,
    private readonly totalBytes: number,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    const chunk = Buffer.alloc(this.chunkSize, 0x5a);
    try {
      while (this.pulledBytes < this.totalBytes) {
        this.pulledBytes += chunk.length;
        yield chunk;
      }
    } finally {
      this.closed = true;
    }
  }
}

const sha256Cache = new Map<string, string>();
function sha256Of(seed: number, size: number): string {
  const id = `${seed}:${size}`;
  let digest = sha256Cache.get(id);
  if (digest === undefined) {
    const hash = createHash('sha256');
    for (const chunk of deterministicChunks(seed, size)) hash.update(chunk);
    digest = hash.digest('hex');
    sha256Cache.set(id, digest);
  }
  return digest;
}

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

async function expectStoredObject(store: ArtifactStore, key: string, seed: number, size: number): Promise<void> {
  const got = await store.get(key);
  expect({ key, size: got.size }).toEqual({ key, size });
  await expectBodyMatches(got.body, seed, size);
}

/** Compares the body with the regenerated bytes as it streams, and checks its length and digest. */
async function expectBodyMatches(body: Readable, seed: number, size: number): Promise<void> {
  const expected = deterministicChunks(seed, size);
  const hash = createHash('sha256');
  let pending: Buffer = Buffer.alloc(0);
  let offset = 0;
  for await (const raw of body) {
    const chunk = Buffer.from(raw as Uint8Array);
    hash.update(chunk);
    let at = 0;
    while (at < chunk.length) {
      if (pending.length === 0) {
        const next = expected.next();
        if (next.done) expect.fail(`body is longer than the ${size} bytes stored`);
        pending = next.value;
      }
      const n = Math.min(pending.length, chunk.length - at);
      if (!chunk.subarray(at, at + n).equals(pending.subarray(0, n))) {
        expect.fail(`body differs from the stored bytes within [${offset}, ${offset + n})`);
      }
      pending = pending.subarray(n);
      at += n;
      offset += n;
    }
  }
  expect(offset, 'body length').toBe(size);
  expect(hash.digest('hex'), 'sha256 of the body').toBe(sha256Of(seed, size));
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return expect.fail('expected the promise to reject');
}

async function expectNotFound(promise: Promise<unknown>): Promise<void> {
  const error = await rejectionOf(promise);
  expect(error).toBeInstanceOf(NotFoundError);
  expect(error).toMatchObject({ code: 'artifact_not_found' });
}

function expectTooLarge(error: unknown, limitBytes: number): void {
  expect(error).toBeInstanceOf(TooLargeError);
  expect(error).toMatchObject({ code: 'artifact_too_large', limitBytes });
}
