import { mkdir, mkdtemp, readdir, rm, stat, truncate, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FsArtifactStore, openFsArtifactStore } from '@trellis/artifacts-fs';
import { NotFoundError, TooLargeError, UnavailableError, ValidationError } from '@trellis/core';
import { deterministicChunks } from '@trellis/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const MiB = 1024 * 1024;

let dir: string;
let root: string;
let store: FsArtifactStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'trellis-artifacts-fs-'));
  root = join(dir, 'artifacts');
  store = await openFsArtifactStore(pathToFileURL(root).href);
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function* bodyOf(seed: number, size: number): AsyncGenerator<Uint8Array> {
  yield* deterministicChunks(seed, size);
}

/** Every file and directory below `base`, as sorted relative paths (directories end with `/`). */
async function listTree(base: string): Promise<string[]> {
  const entries = await readdir(base, { recursive: true, withFileTypes: true });
  return entries.map((e) => relative(base, join(e.parentPath, e.name)) + (e.isDirectory() ? '/' : '')).sort();
}

/** Reads the whole object and checks it is the `size` bytes of `seed`'s data. */
async function expectObject(from: FsArtifactStore, key: string, seed: number, size: number): Promise<void> {
  const got = await from.get(key);
  const chunks: Buffer[] = [];
  for await (const chunk of got.body) chunks.push(chunk as Buffer);
  expect(got.size).toBe(size);
  expect(Buffer.concat(chunks).equals(Buffer.concat([...deterministicChunks(seed, size)]))).toBe(true);
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return expect.fail('expected the promise to reject');
}

describe('temp files', () => {
  it('leaves none behind after a successful put, only the object', async () => {
    await store.put('plans/o/j/terraform.plan.out', bodyOf(1, 3 * MiB), { maxBytes: 50 * MiB });
    expect(await listTree(root)).toEqual([
      'objects/',
      'objects/plans/',
      'objects/plans/o/',
      'objects/plans/o/j/',
      'objects/plans/o/j/terraform.plan.out.artifact',
      'tmp/',
    ]);
  });

  it('leaves none behind after a body that fails mid-way', async () => {
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield* deterministicChunks(2, 2 * MiB);
      throw new Error('connection reset');
    }
    await expect(store.put('k', failing(), { maxBytes: 50 * MiB })).rejects.toThrow('connection reset');
    expect(await listTree(root)).toEqual(['objects/', 'tmp/']);
  });

  it('leaves none behind after a body over the limit, having read at most one chunk past it', async () => {
    let pulled = 0;
    async function* endless(): AsyncGenerator<Uint8Array> {
      const chunk = Buffer.alloc(64 * 1024, 1);
      for (;;) {
        pulled += chunk.length;
        yield chunk;
      }
    }
    const error = await rejectionOf(store.put('k', endless(), { maxBytes: MiB }));
    expect(error).toBeInstanceOf(TooLargeError);
    expect(pulled).toBe(MiB + 64 * 1024);
    expect(await listTree(root)).toEqual(['objects/', 'tmp/']);
  });

  it('leaves none behind after concurrent puts to one key', async () => {
    await Promise.all([1, 2, 3, 4].map((seed) => store.put('same', bodyOf(seed, MiB), { maxBytes: 50 * MiB })));
    expect(await listTree(root)).toEqual(['objects/', 'objects/same.artifact', 'tmp/']);
  });

  it('removes stale temp files of a crashed process on open and keeps fresh ones', async () => {
    const stale = join(root, 'tmp', 'crashed.partial');
    const fresh = join(root, 'tmp', 'in-flight.partial');
    await writeFile(stale, 'half an upload');
    await writeFile(fresh, 'an upload of another process');
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await utimes(stale, twoHoursAgo, twoHoursAgo);
    await openFsArtifactStore(root);
    expect(await readdir(join(root, 'tmp'))).toEqual(['in-flight.partial']);
  });
});

describe('keys', () => {
  const escaping = [
    '../outside',
    'a/../../outside',
    '/etc/passwd',
    'a\\..\\..\\outside',
    'a\0b',
    '',
    '.',
    'a/./b',
    'a//b',
    'a/',
  ];

  it.each(escaping)('rejects %j on put, get and delete without touching anything', async (key) => {
    let pulled = false;
    async function* body(): AsyncGenerator<Uint8Array> {
      pulled = true;
      yield Buffer.from('x');
    }
    const attempts = [() => store.put(key, body(), { maxBytes: MiB }), () => store.get(key), () => store.delete(key)];
    for (const attempt of attempts) {
      const error = await rejectionOf(attempt());
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ code: 'invalid_artifact_key' });
    }
    expect(pulled).toBe(false);
    expect(await readdir(dir)).toEqual(['artifacts']);
    expect(await listTree(root)).toEqual(['objects/', 'tmp/']);
  });

  it('rejects a directory segment ending in the object suffix, which could collide with an object', async () => {
    await expect(store.put('x.artifact/y', bodyOf(1, 10), { maxBytes: MiB })).rejects.toBeInstanceOf(ValidationError);
  });

  it('stores a last segment ending in the object suffix apart from the key without it', async () => {
    await store.put('x/y', bodyOf(1, 10), { maxBytes: MiB });
    await store.put('x/y.artifact', bodyOf(2, 20), { maxBytes: MiB });
    await expectObject(store, 'x/y', 1, 10);
    await expectObject(store, 'x/y.artifact', 2, 20);
  });

  it('rejects a segment too long for the filesystem as a validation error', async () => {
    await expect(store.put(`a/${'n'.repeat(250)}`, bodyOf(1, 10), { maxBytes: MiB })).rejects.toMatchObject({
      code: 'invalid_artifact_key',
    });
  });
});

describe('unavailable storage', () => {
  it('open, check and put fail with UnavailableError when the root cannot be created', async () => {
    const blocker = join(dir, 'not-a-directory');
    await writeFile(blocker, '');
    const badRoot = join(blocker, 'artifacts');
    await expect(openFsArtifactStore(badRoot)).rejects.toBeInstanceOf(UnavailableError);
    const unopened = new FsArtifactStore(badRoot);
    const error = await rejectionOf(unopened.check());
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error).toMatchObject({ code: 'artifact_store_unavailable' });
    expect((error as Error).message).not.toContain(dir);
    await expect(unopened.put('k', bodyOf(1, 10), { maxBytes: MiB })).rejects.toBeInstanceOf(UnavailableError);
  });

  it('check fails when the root is replaced by a file after open', async () => {
    await expect(store.check()).resolves.toBeUndefined();
    await rm(root, { recursive: true });
    await writeFile(root, '');
    await expect(store.check()).rejects.toBeInstanceOf(UnavailableError);
  });

  it('a root that vanished (an unmounted volume) is not silently recreated by put or check', async () => {
    await rm(root, { recursive: true });
    await expect(store.put('k', bodyOf(1, 10), { maxBytes: MiB })).rejects.toBeInstanceOf(UnavailableError);
    await expect(store.check()).rejects.toBeInstanceOf(UnavailableError);
    expect(await readdir(dir)).toEqual([]);
  });

  it('recreates a temp directory removed by hand inside an existing root', async () => {
    await rm(join(root, 'tmp'), { recursive: true });
    await expect(store.check()).resolves.toBeUndefined();
    await expect(store.put('k', bodyOf(1, 10), { maxBytes: MiB })).resolves.toMatchObject({ size: 10 });
  });
});

describe('reads', () => {
  it('a reader keeps the version it opened through an overwrite and a delete', async () => {
    const first = await store.put('k', bodyOf(1, 4 * MiB), { maxBytes: 50 * MiB });
    const reading = await store.get('k');
    await store.put('k', bodyOf(2, MiB), { maxBytes: 50 * MiB });
    await store.delete('k');
    const chunks: Buffer[] = [];
    for await (const chunk of reading.body) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    expect(bytes.length).toBe(first.size);
    expect(bytes.equals(Buffer.concat([...deterministicChunks(1, 4 * MiB)]))).toBe(true);
  });

  it('refuses to serve a damaged (truncated) object short', async () => {
    await store.put('k', bodyOf(1, MiB), { maxBytes: 50 * MiB });
    await truncate(join(root, 'objects', 'k.artifact'), 1000);
    await expect(store.get('k')).rejects.toThrow(/damaged/);
  });

  it('treats a prefix of existing keys as a missing key', async () => {
    await store.put('a/b/c', bodyOf(1, 10), { maxBytes: MiB });
    await expect(store.get('a/b')).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.get('a/b/c/d')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('layout', () => {
  it('delete prunes the directories it empties, up to but not including objects/', async () => {
    await store.put('plans/o/j1/terraform.plan.out', bodyOf(1, 10), { maxBytes: MiB });
    await store.put('plans/o/j2/terraform.plan.out', bodyOf(2, 10), { maxBytes: MiB });
    await store.delete('plans/o/j1/terraform.plan.out');
    expect(await listTree(join(root, 'objects'))).toEqual([
      'plans/',
      'plans/o/',
      'plans/o/j2/',
      'plans/o/j2/terraform.plan.out.artifact',
    ]);
    await store.delete('plans/o/j2/terraform.plan.out');
    expect(await listTree(join(root, 'objects'))).toEqual([]);
    await store.put('plans/o/j3/terraform.plan.out', bodyOf(3, 10), { maxBytes: MiB });
    await expectObject(store, 'plans/o/j3/terraform.plan.out', 3, 10);
  });

  it('puts and deletes racing in one directory never lose an object', async () => {
    const keys = Array.from({ length: 20 }, (_, i) => `race/dir/${i}`);
    await Promise.all(
      keys.map(async (key, i) => {
        await store.put(key, bodyOf(i, 1000), { maxBytes: MiB });
        if (i % 2 === 0) await store.delete(key);
      }),
    );
    for (const [i, key] of keys.entries()) {
      if (i % 2 === 0) await expect(store.get(key)).rejects.toBeInstanceOf(NotFoundError);
      else await expectObject(store, key, i, 1000);
    }
  });

  it('keeps artifacts readable by the server user only (plans hold secrets)', async () => {
    await store.put('plans/o/j/terraform.plan.out', bodyOf(1, 10), { maxBytes: MiB });
    expect((await stat(join(root, 'objects/plans/o/j/terraform.plan.out.artifact'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(root, 'objects/plans/o'))).mode & 0o777).toBe(0o700);
  });
});

describe('openFsArtifactStore', () => {
  it('accepts a file: URL with escaped characters and creates the directory', async () => {
    const spaced = join(dir, 'with space', 'artifacts');
    const opened = await openFsArtifactStore(pathToFileURL(spaced).href);
    expect(opened.root).toBe(spaced);
    expect((await stat(spaced)).isDirectory()).toBe(true);
  });

  it('accepts a plain path, relative to the working directory', async () => {
    const target = join(dir, 'plain');
    const opened = await openFsArtifactStore(relative(process.cwd(), target));
    expect(opened.root).toBe(target);
    await opened.put('k', bodyOf(1, 10), { maxBytes: MiB });
    expect(await readdir(join(target, 'objects'))).toEqual(['k.artifact']);
  });

  it.each(['s3://bucket/prefix', 'gs://bucket', 'file://remote-host/dir', ''])('rejects %j', async (url) => {
    const error = await rejectionOf(openFsArtifactStore(url));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ code: 'invalid_artifacts_url' });
  });
});

describe('reopening', () => {
  it('opens a root that already holds objects and serves them', async () => {
    await store.put('k', bodyOf(1, 1234), { maxBytes: MiB });
    const reopened = await openFsArtifactStore(root);
    await expectObject(reopened, 'k', 1, 1234);
  });

  it('treats a directory where an object file should be as a missing key', async () => {
    await mkdir(join(root, 'objects', 'stray.artifact'));
    await expect(store.get('stray')).rejects.toBeInstanceOf(NotFoundError);
  });
});
