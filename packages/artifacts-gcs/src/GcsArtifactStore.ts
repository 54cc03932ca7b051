import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Bucket, Storage } from '@google-cloud/storage';
import {
  type ArtifactObject,
  type ArtifactStore,
  NotFoundError,
  type StoredArtifact,
  UnavailableError,
} from '@trellis/core';
import { isMissingBucket, statusOf, toDomainError } from './gcsErrors.js';
import { MeteredBody } from '@trellis/core';
import { objectNameForKey } from '@trellis/core';

const MiB = 1024 * 1024;
const CONTENT_TYPE = 'application/octet-stream';

/** A `get` races writers: the generation it read the metadata of may be replaced before the read. */
const GET_ATTEMPTS = 3;

export interface GcsArtifactStoreOptions {
  storage: Storage;
  bucket: string;
  /** Prepended to every key with a slash; '' for the top of the bucket. */
  prefix: string;
  /**
   * A body up to this size is buffered and sent in one request; a larger one streams through a
   * resumable upload.
   */
  singleRequestBytes?: number;
  /** An upload or download that moves no byte for this long fails as unavailable. */
  idleTimeoutMs?: number;
  /** How long `check()` may take before the store counts as unavailable. */
  checkTimeoutMs?: number;
  /**
   * Whether requests to the endpoint carry Google credentials (false for an emulator). Decides how
   * an abandoned resumable session is cancelled.
   */
  authenticated?: boolean;
}

/**
 * The artifact store on Google Cloud Storage.
 *
 * `put` streams and writes every byte once. A body up to `singleRequestBytes` (default 1 MiB)
 * goes in one upload request. A larger one streams through a resumable upload (one request, no
 * chunk buffering: memory stays at a few stream buffers) to the key itself; GCS replaces the object
 * only when the upload is finalized by its last byte, so readers see the old object or the new one,
 * never a partial one. The sha256 is not kept beside the object: the caller records it and checks
 * the bytes against it on download. A body over the limit or one that fails ends the upload request
 * before its last byte, so GCS never finalizes an object; the resumable session is then cancelled
 * (`DELETE` on its URI) and any earlier object under the key stays.
 */
export class GcsArtifactStore implements ArtifactStore {
  readonly storage: Storage;
  readonly bucket: Bucket;
  readonly prefix: string;
  readonly singleRequestBytes: number;
  private readonly idleTimeoutMs: number;
  private readonly checkTimeoutMs: number;
  private readonly authenticated: boolean;

  constructor(options: GcsArtifactStoreOptions) {
    this.storage = options.storage;
    this.bucket = options.storage.bucket(options.bucket);
    this.prefix = options.prefix;
    this.singleRequestBytes = options.singleRequestBytes ?? MiB;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
    this.checkTimeoutMs = options.checkTimeoutMs ?? 5000;
    this.authenticated = options.authenticated ?? true;
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, options: { maxBytes: number }): Promise<StoredArtifact> {
    const name = objectNameForKey(this.prefix, key);
    const meter = new MeteredBody(body, options.maxBytes);
    try {
      const head = await meter.readHead(this.singleRequestBytes);
      if (meter.complete) return await this.putWhole(name, head, meter);
      return await this.putResumable(name, head, meter);
    } catch (error) {
      await meter.stop();
      throw meter.failure ?? toDomainError(error, 'store the artifact');
    }
  }

  async get(key: string): Promise<ArtifactObject> {
    const name = objectNameForKey(this.prefix, key);
    for (let attempt = 1; ; attempt += 1) {
      let metadata: { size?: string | number; generation?: string | number };
      try {
        [metadata] = await this.bucket.file(name).getMetadata();
      } catch (error) {
        throw await this.readError(error);
      }
      const size = Number(metadata.size);
      if (!Number.isSafeInteger(size)) {
        throw new Error(`GCS answered the metadata of ${JSON.stringify(name)} without a size`);
      }
      // Read exactly the generation the metadata describes, so body and size always match.
      const file = this.bucket.file(name, { generation: metadata.generation as number });
      const body = file.createReadStream({ validation: false });
      try {
        await this.responseOf(body);
      } catch (error) {
        body.destroy();
        // That generation was replaced (or deleted) between the two requests: read the new one.
        if (statusOf(error) === 404 && attempt < GET_ATTEMPTS) continue;
        throw await this.readError(error);
      }
      return { size, body };
    }
  }

  async delete(key: string): Promise<void> {
    const name = objectNameForKey(this.prefix, key);
    try {
      await this.bucket.file(name).delete({ ignoreNotFound: true });
    } catch (error) {
      throw toDomainError(error, 'delete the artifact');
    }
  }

  /** The GCS client holds no connection of its own (its keep-alive sockets time out): nothing to release. */
  async close(): Promise<void> {}

  /** Lists at most one object under the prefix: needs the bucket, credentials and `storage.objects.list`. */
  async check(): Promise<void> {
    const listing = this.bucket.getFiles({
      prefix: this.prefix === '' ? undefined : `${this.prefix}/`,
      maxResults: 1,
      autoPaginate: false,
    });
    try {
      await withDeadline(listing, this.checkTimeoutMs, 'reach the bucket');
    } catch (error) {
      throw toDomainError(error, 'reach the bucket');
    }
  }

  /** A small body: one upload request, digest included. */
  private async putWhole(name: string, head: Buffer[], meter: MeteredBody): Promise<StoredArtifact> {
    const bytes = head.length === 1 ? (head[0] as Buffer) : Buffer.concat(head);
    const digest = meter.digest();
    await this.bucket.file(name).save(bytes, {
      resumable: false,
      validation: 'md5',
      contentType: CONTENT_TYPE,
    });
    return { size: meter.size, sha256: digest };
  }

  /** A larger body: a resumable upload to the key, finalized by its last byte. */
  private async putResumable(name: string, head: Buffer[], meter: MeteredBody): Promise<StoredArtifact> {
    const sink = this.bucket.file(name).createWriteStream({
      resumable: true,
      validation: 'md5',
      contentType: CONTENT_TYPE,
      metadata: { contentType: CONTENT_TYPE },
    });
    let sessionUri: string | undefined;
    sink.on('uri', (uri: string) => {
      sessionUri = uri;
    });
    // The upload request has no timeout of its own: a backend that stops taking bytes (or never
    // answers the last one) fails the upload after `idleTimeoutMs` without progress.
    let idle: NodeJS.Timeout | undefined;
    const stalled = new UnavailableError(
      'artifact_store_unavailable',
      `artifact storage (GCS) cannot store the artifact: no progress for ${this.idleTimeoutMs / 1000}s`,
    );
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => sink.destroy(stalled), this.idleTimeoutMs);
    };
    async function* watched(chunks: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
      for await (const chunk of chunks) {
        touch();
        yield chunk;
      }
      touch();
    }
    const source = Readable.from(watched(meter.rest(head)), { highWaterMark: 1 });
    try {
      touch();
      await pipeline(source, sink);
    } catch (error) {
      clearTimeout(idle);
      await this.cancelSession(sessionUri);
      throw error;
    } finally {
      clearTimeout(idle);
    }
    if (!meter.complete) throw new Error('the resumable upload ended before the body did');
    return { size: meter.size, sha256: meter.digest() };
  }

  /** Cancels an unfinished resumable session so it cannot be completed later (GCS answers 499). */
  private async cancelSession(uri: string | undefined): Promise<void> {
    if (uri === undefined) return;
    try {
      if (this.authenticated) {
        await this.storage.authClient.request({
          url: uri,
          method: 'DELETE',
          timeout: this.checkTimeoutMs,
          validateStatus: () => true,
        });
      } else {
        const response = await fetch(uri, { method: 'DELETE', signal: AbortSignal.timeout(this.checkTimeoutMs) });
        await response.body?.cancel();
      }
    } catch {
      // Best effort: an unfinished session holds no object and expires after a week.
    }
  }

  /** Waits for the download's response headers (or its error), at most `idleTimeoutMs`. */
  private responseOf(body: Readable): Promise<void> {
    return withDeadline(
      new Promise<void>((resolve, reject) => {
        body.once('response', () => resolve());
        body.once('error', reject);
        // The library sends the request on the first read.
        body.read(0);
      }),
      this.idleTimeoutMs,
      'read the artifact',
    );
  }

  /**
   * A 404 is a missing object unless the bucket is the thing missing; GCS says which in words only
   * (emulators not even that), so a miss asks the bucket before answering not-found.
   */
  private async readError(error: unknown): Promise<unknown> {
    if (statusOf(error) !== 404) return toDomainError(error, 'read the artifact');
    if (isMissingBucket(error)) return toDomainError(error, 'read the artifact');
    try {
      await this.check();
    } catch (unavailable) {
      return unavailable;
    }
    return new NotFoundError('artifact');
  }
}

/** `promise`, or an UnavailableError once `ms` have passed (the request itself is left to its own limits). */
function withDeadline<T>(promise: Promise<T>, ms: number, action: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new UnavailableError(
            'artifact_store_unavailable',
            `artifact storage (GCS) cannot ${action}: the request timed out after ${ms / 1000}s`,
          ),
        ),
      ms,
    );
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
