import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { type ArtifactStore, NotFoundError, type StoredArtifact } from '@trellis/core';
import { MeteredBody } from './meteredBody.js';
import { objectNameForKey, stagingName } from './objectKey.js';
import { isMissingKey, toDomainError } from './s3Errors.js';

const MiB = 1024 * 1024;

/** S3's smallest part (except the last); also the default part size. */
export const MIN_PART_SIZE = 5 * MiB;

/** CopyObject copies at most 5 GiB in one request. */
const MAX_COPY_BYTES = 5 * 1024 * MiB;

const CONTENT_TYPE = 'application/octet-stream';
const SHA256_PATTERN = /^[0-9a-f]{64}$/;

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
  /** Parts of one upload in flight at once. */
  queueSize?: number;
  /** How long `check()` may take before the store counts as unavailable. */
  checkTimeoutMs?: number;
}

/**
 * The artifact store on S3 and S3-compatible servers (MinIO, Ceph RGW, Cloudflare R2).
 *
 * `put` streams. It reads the body up to `partSize`: a body that ends by then is sent as one
 * PutObject carrying its sha256 as metadata (`x-amz-meta-sha256`) and as `x-amz-checksum-sha256`,
 * which S3 verifies. A larger body goes through a multipart upload (lib-storage) to a staging
 * name below `<prefix>/.trellis-staging/`; once it is complete and within the limit, a server-side
 * CopyObject commits it to the key with its sha256 (S3 cannot set metadata at the end of a
 * multipart upload) and the staging object is deleted. So a reader sees the old object or the new
 * one, each with its own digest, never a partial one. Memory per upload is bounded by the part
 * size: lib-storage holds at most `queueSize` parts in flight plus the one it is filling (and, for
 * a moment, the copy it makes of it), so about `partSize × (queueSize + 2)`. A body over the limit
 * or one that fails stops the upload, which lib-storage aborts (AbortMultipartUpload) before
 * `put` rejects: no part, upload or object is left behind.
 */
export class S3ArtifactStore implements ArtifactStore {
  readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;
  readonly partSize: number;
  readonly queueSize: number;
  private readonly checkTimeoutMs: number;

  constructor(options: S3ArtifactStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.prefix = options.prefix;
    this.partSize = options.partSize ?? MIN_PART_SIZE;
    this.queueSize = options.queueSize ?? 2;
    this.checkTimeoutMs = options.checkTimeoutMs ?? 5000;
    if (!Number.isSafeInteger(this.partSize) || this.partSize < MIN_PART_SIZE) {
      throw new RangeError(`partSize must be an integer of at least ${MIN_PART_SIZE} bytes (5 MiB)`);
    }
    if (!Number.isSafeInteger(this.queueSize) || this.queueSize < 1) {
      throw new RangeError('queueSize must be a positive integer');
    }
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, options: { maxBytes: number }): Promise<StoredArtifact> {
    const name = objectNameForKey(this.prefix, key);
    if (options.maxBytes > MAX_COPY_BYTES) throw new RangeError('maxBytes must be at most 5 GiB on S3');
    const meter = new MeteredBody(body, options.maxBytes);
    try {
      const head = await meter.readHead(this.partSize);
      if (meter.complete) return await this.putWhole(name, head, meter);
      return await this.putInParts(name, head, meter);
    } catch (error) {
      await meter.stop();
      throw meter.failure ?? toDomainError(error, 'store the artifact');
    }
  }

  async get(key: string): Promise<StoredArtifact & { body: Readable }> {
    const name = objectNameForKey(this.prefix, key);
    let output: GetObjectCommandOutput;
    try {
      output = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: name }));
    } catch (error) {
      if (isMissingKey(error)) throw new NotFoundError('artifact');
      throw toDomainError(error, 'read the artifact');
    }
    const body = output.Body as Readable;
    const sha256 = output.Metadata?.sha256 ?? '';
    const size = output.ContentLength;
    if (!SHA256_PATTERN.test(sha256) || size === undefined) {
      body.destroy();
      // Only an object put there by something else gets here: a server fault, not a client's.
      throw new Error(
        `object ${JSON.stringify(name)} in bucket ${this.bucket} has no sha256 metadata; it is not from this store`,
      );
    }
    return { size, sha256, body };
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

  /** A body that fits in one part: one PutObject, digest and checksum included. */
  private async putWhole(name: string, head: Buffer[], meter: MeteredBody): Promise<StoredArtifact> {
    const bytes = head.length === 1 ? (head[0] as Buffer) : Buffer.concat(head);
    const digest = meter.digest();
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: name,
        Body: bytes,
        ContentLength: bytes.length,
        ContentType: CONTENT_TYPE,
        Metadata: { sha256: digest },
        ChecksumSHA256: Buffer.from(digest, 'hex').toString('base64'),
      }),
    );
    return { size: meter.size, sha256: digest };
  }

  /** A larger body: multipart upload to a staging name, then a server-side copy onto the key. */
  private async putInParts(name: string, head: Buffer[], meter: MeteredBody): Promise<StoredArtifact> {
    const staging = stagingName(this.prefix, randomUUID());
    const source = Readable.from(meter.rest(head), { highWaterMark: 1 });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: staging, Body: source, ContentType: CONTENT_TYPE },
      partSize: this.partSize,
      queueSize: this.queueSize,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      source.destroy();
      throw error;
    }
    if (!meter.complete) throw new Error('the multipart upload ended before the body did');
    const digest = meter.digest();
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: name,
          CopySource: `${this.bucket}/${encodeObjectName(staging)}`,
          MetadataDirective: 'REPLACE',
          Metadata: { sha256: digest },
          ContentType: CONTENT_TYPE,
        }),
      );
    } finally {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: staging })).catch(() => undefined);
    }
    return { size: meter.size, sha256: digest };
  }
}

/** `CopySource` is URL-encoded, slashes kept. */
function encodeObjectName(name: string): string {
  return name.split('/').map(encodeURIComponent).join('/');
}
