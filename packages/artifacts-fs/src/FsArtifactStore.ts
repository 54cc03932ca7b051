import { createHash, randomUUID } from 'node:crypto';
import { type FileHandle, mkdir, open, readdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import {
  type ArtifactObject,
  type ArtifactStore,
  NotFoundError,
  type StoredArtifact,
  TooLargeError,
} from '@trellis/core';
import { decodeHeader, encodeHeader, HEADER_BYTES } from './artifactHeader.js';
import { objectPathForKey } from './artifactKey.js';
import { fsOp, hasCode, toDomainError } from './fsErrors.js';

/** Plan files hold secrets in clear, so only the server's own user may read them. */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/** Small chunks are gathered into writes of this size; larger chunks are written as they come. */
const STAGING_BYTES = 1024 * 1024;

/** Temp files older than this were left by a crashed process (an upload takes seconds). */
const STALE_TEMP_FILE_MS = 60 * 60 * 1000;

/** A concurrent `delete` may prune a directory between a `put`'s `mkdir` and its `rename`. */
const COMMIT_ATTEMPTS = 3;

/**
 * The artifact store of the embedded default: objects are files below `<root>/objects/`, written
 * as temp files in `<root>/tmp/` (same filesystem, so `rename(2)` is atomic) and renamed into place
 * once complete and fsynced. Each file carries its size and sha256 in a header (see
 * `artifactHeader.ts` for why), so `get` never re-hashes. The `body` that `get` returns holds an
 * open file until it is read to the end or destroyed.
 */
export class FsArtifactStore implements ArtifactStore {
  readonly root: string;
  readonly objectsDir: string;
  readonly tempDir: string;

  constructor(root: string) {
    this.root = resolve(root);
    this.objectsDir = join(this.root, 'objects');
    this.tempDir = join(this.root, 'tmp');
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, options: { maxBytes: number }): Promise<StoredArtifact> {
    const target = objectPathForKey(this.objectsDir, key);
    const { maxBytes } = options;
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
      throw new RangeError('maxBytes must be a non-negative integer');
    }

    const tempPath = join(this.tempDir, `${randomUUID()}.partial`);
    const file = await this.createTempFile(tempPath);
    let fileOpen = true;
    try {
      const stored = await writeBody(file, body, maxBytes);
      await fsOp('write the artifact', async () => {
        await writeFully(file, encodeHeader(stored), 0);
        await file.sync();
        fileOpen = false;
        await file.close();
      });
      await this.commit(tempPath, target);
      return stored;
    } catch (error) {
      if (fileOpen) await file.close().catch(() => undefined);
      await rm(tempPath, { force: true }).catch(() => undefined);
      throw error;
    }
  }

  async get(key: string): Promise<ArtifactObject> {
    const path = objectPathForKey(this.objectsDir, key);
    let file: FileHandle;
    try {
      file = await open(path, 'r');
    } catch (error) {
      if (hasCode(error, 'ENOENT', 'ENOTDIR')) throw new NotFoundError('artifact');
      throw toDomainError(error, 'read the artifact');
    }
    try {
      const { size } = await readHeader(file, key);
      if (size === 0) {
        await file.close();
        return { size, body: emptyBody() };
      }
      // The stream reads from the descriptor opened above, so a concurrent overwrite or delete
      // cannot mix versions; it closes the file when it ends or is destroyed.
      const body = file.createReadStream({ start: HEADER_BYTES, end: HEADER_BYTES + size - 1 });
      return { size, body };
    } catch (error) {
      await file.close().catch(() => undefined);
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const path = objectPathForKey(this.objectsDir, key);
    try {
      await unlink(path);
    } catch (error) {
      if (hasCode(error, 'ENOENT', 'ENOTDIR')) return;
      throw toDomainError(error, 'delete the artifact');
    }
    await this.pruneEmptyDirectories(dirname(path));
  }

  /** Every call opens and closes its own files: nothing is held between calls. */
  async close(): Promise<void> {}

  async check(): Promise<void> {
    const probe = join(this.tempDir, `check-${randomUUID()}.partial`);
    const file = await this.createTempFile(probe);
    await fsOp('write', async () => {
      try {
        await file.close();
      } finally {
        await unlink(probe);
      }
    });
  }

  /** Removes temp files a crashed process left behind; `openFsArtifactStore` calls it. */
  async removeStaleTempFiles(olderThanMs = STALE_TEMP_FILE_MS): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    const names = await readdir(this.tempDir).catch(() => [] as string[]);
    let removed = 0;
    for (const name of names) {
      const path = join(this.tempDir, name);
      try {
        const stats = await stat(path);
        if (stats.isFile() && stats.mtimeMs < cutoff) {
          await unlink(path);
          removed += 1;
        }
      } catch {
        // Gone already (another process sweeping) or refused: the next start tries again.
      }
    }
    return removed;
  }

  private async createTempFile(path: string): Promise<FileHandle> {
    try {
      return await open(path, 'wx', FILE_MODE);
    } catch (error) {
      if (!hasCode(error, 'ENOENT')) throw toDomainError(error, 'write');
    }
    // The temp directory was removed (by hand, say). Recreate it, but only inside an existing root:
    // a root that vanished (an unmounted volume) must fail rather than fill the disk below it.
    return fsOp('write', async () => {
      await mkdir(this.tempDir, { mode: DIR_MODE }).catch((error: unknown) => {
        if (!hasCode(error, 'EEXIST')) throw error;
      });
      return open(path, 'wx', FILE_MODE);
    });
  }

  private async commit(tempPath: string, target: string): Promise<void> {
    const parent = dirname(target);
    for (let attempt = 1; ; attempt += 1) {
      try {
        await mkdir(parent, { recursive: true, mode: DIR_MODE });
        await rename(tempPath, target);
        break;
      } catch (error) {
        if (hasCode(error, 'ENOENT') && attempt < COMMIT_ATTEMPTS) continue;
        throw toDomainError(error, 'store the artifact');
      }
    }
    // The rename is durable only once the directory entry is.
    await fsOp('store the artifact', () => syncDirectory(parent));
  }

  /** Best effort: a directory that is not empty, already gone or refused simply stays. */
  private async pruneEmptyDirectories(dir: string): Promise<void> {
    let current = dir;
    while (current.startsWith(this.objectsDir + sep)) {
      try {
        await rmdir(current);
      } catch {
        return;
      }
      current = dirname(current);
    }
  }
}

/** Streams `body` into `file` after the header's place, hashing and counting as it goes. */
async function writeBody(file: FileHandle, body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<StoredArtifact> {
  const hash = createHash('sha256');
  const writer = new StagedFileWriter(file, HEADER_BYTES);
  let size = 0;
  // One chunk is pulled only after the previous one is written: the iterator is the backpressure.
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      // Leaving the loop by `throw` calls the iterator's `return()`, so the producer stops too.
      throw new TooLargeError('artifact_too_large', `artifact is larger than the limit of ${maxBytes} bytes`, maxBytes);
    }
    hash.update(chunk);
    await writer.write(chunk);
  }
  await writer.flush();
  return { size, sha256: hash.digest('hex') };
}

class StagedFileWriter {
  private readonly staging = Buffer.allocUnsafe(STAGING_BYTES);
  private staged = 0;

  constructor(
    private readonly file: FileHandle,
    private position: number,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.byteLength) {
      if (this.staged === 0 && chunk.byteLength - offset >= STAGING_BYTES) {
        await this.writeOut(chunk.subarray(offset));
        return;
      }
      const take = Math.min(STAGING_BYTES - this.staged, chunk.byteLength - offset);
      this.staging.set(chunk.subarray(offset, offset + take), this.staged);
      this.staged += take;
      offset += take;
      if (this.staged === STAGING_BYTES) await this.flush();
    }
  }

  async flush(): Promise<void> {
    if (this.staged === 0) return;
    await this.writeOut(this.staging.subarray(0, this.staged));
    this.staged = 0;
  }

  private async writeOut(bytes: Uint8Array): Promise<void> {
    await fsOp('write the artifact', () => writeFully(this.file, bytes, this.position));
    this.position += bytes.byteLength;
  }
}

async function writeFully(file: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let written = 0;
  while (written < bytes.byteLength) {
    const { bytesWritten } = await file.write(bytes, written, bytes.byteLength - written, position + written);
    written += bytesWritten;
  }
}

async function readHeader(file: FileHandle, key: string): Promise<StoredArtifact> {
  const stats = await fsOp('read the artifact', () => file.stat());
  if (!stats.isFile()) throw new NotFoundError('artifact');
  const bytes = await fsOp('read the artifact', async () => {
    const buffer = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await file.read(buffer, 0, HEADER_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  });
  const header = decodeHeader(bytes);
  // Only a foreign or damaged file gets here (we never publish a partial one): a server fault.
  if (!header) throw new Error(`artifact ${JSON.stringify(key)} has no valid header; the file is not from this store`);
  if (stats.size !== HEADER_BYTES + header.size) {
    throw new Error(
      `artifact ${JSON.stringify(key)} is damaged: its header says ${header.size} bytes but the file holds ${stats.size - HEADER_BYTES}`,
    );
  }
  return header;
}

function emptyBody(): Readable {
  return new Readable({
    read() {
      this.push(null);
    },
  });
}

async function syncDirectory(path: string): Promise<void> {
  const dir = await open(path, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
