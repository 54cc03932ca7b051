import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { type ArtifactObject, type ArtifactStore, NotFoundError, type StoredArtifact } from '@trellis/core';
import { MeteredBody } from '@trellis/core';
import { objectNameForKey } from '@trellis/core';
import { MultipartUpload } from './multipartUpload.js';
import { PartBufferPool, UploadBuffers } from './partBuffers.js';
import { isMissingKey, toDomainError } from './s3Errors.js';

const MiB = 1024 * 1024;

/** S3's smallest part (except the last); also the default part size. */
export const MIN_PART_SIZE = 5 * MiB;

/** Part memory of all uploads of a store together, by default: three parts of 5 MiB. */
export const DEFAULT_BUFFER_BYTES = 16 * MiB;

/** A multipart upload has at most 10,000 parts. */
const MAX_PARTS = 10_000;

const CONTENT_TYPE = 'application/octet-stream';

export interface S3ArtifactStoreOptions {
  client: S3Client;
  bucket: string;
  /** Prepended to every key with a slash; '' for the top of the bucket. */
  prefix: string;
  /**
   * Bytes per multipart part (at least 5 MiB). A body up to this size is sent in one PutObject;
   * a larger one is uploaded in parts of this size.
   */
  partSize?: number;
  /**
   * Part buffers per upload (default 1). With one, a part is sent and then the buffer refilled;
   * with more, one fills from the body while the others are sent. An upload never holds more than
   * `partSize × queueSize` bytes of the body.
   */
  queueSize?: number;
  /**
   * Bytes of part buffers for all uploads of the store together (default 16 MiB, at least
   * `partSize × queueSize`): uploads beyond it wait for a buffer, so a server's memory for bodies
   * stays bounded however many uploads run at once.
   */
  bufferBytes?: number;
  /** How long `check()` may take before the store counts as unavailable. */
  checkTimeoutMs?: number;
}

/**
 * The artifact store on S3 and S3-compatible servers (MinIO, Ceph RGW, Cloudflare R2).
 *
 * `put` streams: each chunk of the body is copied into a part buffer as it arrives, and memory is
 * bounded by `partSize × queueSize` per upload whatever the body's size, and by `bufferBytes` for
 * all uploads together (see `partBuffers.ts`). Every byte is written once. A body that ends within
 * the first part is sent as one PutObject with `x-amz-checksum-sha256`, which S3 verifies. A larger
 * one goes through a multipart upload to the key itself, parts sent as they fill with a CRC32 each;
 * S3 replaces the object only when the upload completes, after the last byte was counted within
 * the limit, so a reader sees the old object or the new one, never a partial one. The sha256 is not
 * kept beside the object (S3 cannot set metadata at the end of a multipart upload): the caller
 * records it and checks the bytes against it on download. A body over the limit or one that fails
 * stops the source, waits for the parts in flight and aborts the multipart upload before `put`
 * rejects: no part, upload or object is left behind, and any earlier object under the key stays.
 */
export class S3ArtifactStore implements ArtifactStore {
  readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;
  readonly partSize: number;
  readonly queueSize: number;
  private readonly buffers: PartBufferPool;
  private readonly checkTimeoutMs: number;
  private checksumMode: Promise<boolean> | undefined;

  constructor(options: S3ArtifactStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.prefix = options.prefix;
    this.partSize = options.partSize ?? MIN_PART_SIZE;
    this.queueSize = options.queueSize ?? 1;
    this.checkTimeoutMs = options.checkTimeoutMs ?? 5000;
    if (!Number.isSafeInteger(this.partSize) || this.partSize < MIN_PART_SIZE) {
      throw new RangeError(`partSize must be an integer of at least ${MIN_PART_SIZE} bytes (5 MiB)`);
    }
    if (!Number.isSafeInteger(this.queueSize) || this.queueSize < 1) {
      throw new RangeError('queueSize must be a positive integer');
    }
    const bufferBytes = options.bufferBytes ?? DEFAULT_BUFFER_BYTES;
    this.buffers = new PartBufferPool(this.partSize, Math.max(this.queueSize, Math.floor(bufferBytes / this.partSize)));
  }

  /** Part buffers shared by all uploads: `partSize × bufferCount` bytes at most. */
  get bufferCount(): number {
    return this.buffers.count;
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, options: { maxBytes: number }): Promise<StoredArtifact> {
    const name = objectNameForKey(this.prefix, key);
    if (options.maxBytes > this.partSize * MAX_PARTS) {
      throw new RangeError(`maxBytes must be at most ${MAX_PARTS} parts of ${this.partSize} bytes on S3`);
    }
    const meter = new MeteredBody(body, options.maxBytes);
    const buffers = new UploadBuffers(this.buffers, this.queueSize);
    let part = buffers.first();
    let upload: MultipartUpload | undefined;
    try {
      for (let chunk = await meter.next(); chunk !== null; chunk = await meter.next()) {
        for (let offset = 0; offset < chunk.byteLength; ) {
          if (part.cramped) await buffers.grow(part);
          // A full part goes out only once more bytes come, so a body of one part is one PutObject.
          if (part.full) {
            upload ??= await MultipartUpload.start(this.client, this.bucket, name, await this.checksums());
            upload.send(part, buffers.sending(part));
            part = await buffers.next();
          }
          offset += part.fill(chunk, offset);
        }
      }
      const stored = { size: meter.size, sha256: meter.digest() };
      if (upload === undefined) {
        await this.putWhole(name, part.bytes(), stored.sha256, await this.checksums());
        return stored;
      }
      upload.send(part, buffers.sending(part));
      await upload.complete();
      return stored;
    } catch (error) {
      await meter.stop();
      await upload?.abort();
      throw meter.failure ?? toDomainError(error, 'store the artifact');
    } finally {
      buffers.close();
    }
  }

  async get(key: string): Promise<ArtifactObject> {
    const name = objectNameForKey(this.prefix, key);
    let output: GetObjectCommandOutput;
    try {
      output = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: name }));
    } catch (error) {
      if (isMissingKey(error)) throw new NotFoundError('artifact');
      throw toDomainError(error, 'read the artifact');
    }
    const body = output.Body as Readable;
    const size = output.ContentLength;
    if (size === undefined) {
      body.destroy();
      throw new Error(`S3 answered GetObject ${JSON.stringify(name)} without a Content-Length`);
    }
    return { size, body };
  }

  async delete(key: string): Promise<void> {
    const name = objectNameForKey(this.prefix, key);
    try {
      // S3 answers 204 whether or not the key existed.
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: name }));
    } catch (error) {
      throw toDomainError(error, 'delete the artifact');
    }
  }

  /** Closes the S3 client's sockets. */
  async close(): Promise<void> {
    this.client.destroy();
  }

  /** Lists at most one key under the prefix: needs the bucket, the credentials and `s3:ListBucket`. */
  async check(): Promise<void> {
    try {
      await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.prefix === '' ? undefined : `${this.prefix}/`,
          MaxKeys: 1,
        }),
        { abortSignal: AbortSignal.timeout(this.checkTimeoutMs) },
      );
    } catch (error) {
      throw toDomainError(error, 'reach the bucket');
    }
  }

  /**
   * Whether requests carry checksums: the SDK's `requestChecksumCalculation` (`WHEN_SUPPORTED`
   * unless `AWS_REQUEST_CHECKSUM_CALCULATION=WHEN_REQUIRED`, for servers that refuse them).
   */
  private checksums(): Promise<boolean> {
    this.checksumMode ??= Promise.resolve(this.client.config.requestChecksumCalculation()).then(
      (mode) => mode !== 'WHEN_REQUIRED',
      () => true,
    );
    return this.checksumMode;
  }

  /** A body that fits in one part: one PutObject with its digest, which S3 verifies. */
  private async putWhole(name: string, bytes: Buffer, sha256: string, checksums: boolean): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: name,
        Body: bytes,
        ContentLength: bytes.length,
        ContentType: CONTENT_TYPE,
        ChecksumSHA256: checksums ? Buffer.from(sha256, 'hex').toString('base64') : undefined,
      }),
    );
  }
}
