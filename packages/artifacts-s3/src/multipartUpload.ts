import {
  AbortMultipartUploadCommand,
  type CompletedPart,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { Part } from './partBuffers.js';

const CONTENT_TYPE = 'application/octet-stream';

/**
 * One multipart upload straight to the object's key: parts are sent as they fill, several at a
 * time, and the upload is either completed or aborted, never left behind. S3 makes the object
 * visible only when the upload completes, all at once, so readers see the old object or the new
 * one, never a partial one. Part failures are kept and rethrown
 * by the next `send` or by `complete`, so no promise is ever left unhandled.
 */
export class MultipartUpload {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly parts: CompletedPart[] = [];
  private failure: unknown;
  private nextPartNumber = 1;

  private constructor(
    private readonly client: S3Client,
    readonly bucket: string,
    readonly key: string,
    private readonly uploadId: string,
    private readonly checksumAlgorithm: 'CRC32' | undefined,
  ) {}

  /**
   * `checksums`: whether parts carry a CRC32 (the SDK's default). An upload and its parts must
   * agree, so it is decided here, as lib-storage does, from the client's
   * `requestChecksumCalculation` (`AWS_REQUEST_CHECKSUM_CALCULATION=WHEN_REQUIRED` turns it off for
   * servers that refuse checksum headers).
   */
  static async start(client: S3Client, bucket: string, key: string, checksums: boolean): Promise<MultipartUpload> {
    const checksumAlgorithm = checksums ? 'CRC32' : undefined;
    const created = await client.send(
      new CreateMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        ContentType: CONTENT_TYPE,
        ChecksumAlgorithm: checksumAlgorithm,
      }),
    );
    if (!created.UploadId) throw new Error('CreateMultipartUpload answered without an UploadId');
    return new MultipartUpload(client, bucket, key, created.UploadId, checksumAlgorithm);
  }

  /** Starts sending `part` as the next part; `done` runs once S3 no longer reads its bytes. */
  send(part: Part, done: () => void): void {
    if (this.failure !== undefined) {
      done();
      throw this.failure;
    }
    const partNumber = this.nextPartNumber;
    this.nextPartNumber += 1;
    const body = part.bytes();
    const sending: Promise<void> = this.client
      .send(
        new UploadPartCommand({
          Bucket: this.bucket,
          Key: this.key,
          UploadId: this.uploadId,
          PartNumber: partNumber,
          Body: body,
          ContentLength: body.length,
          ChecksumAlgorithm: this.checksumAlgorithm,
        }),
      )
      .then((sent) => {
        if (!sent.ETag) throw new Error(`UploadPart ${partNumber} answered without an ETag`);
        this.parts.push({ PartNumber: partNumber, ETag: sent.ETag, ChecksumCRC32: sent.ChecksumCRC32 });
      })
      .catch((error: unknown) => {
        this.failure ??= error;
      })
      .finally(() => {
        this.inFlight.delete(sending);
        done();
      });
    this.inFlight.add(sending);
  }

  /** Waits for every part, then completes the upload: the object is replaced from then on. */
  async complete(): Promise<void> {
    await Promise.all(this.inFlight);
    if (this.failure !== undefined) throw this.failure;
    const parts = [...this.parts].sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0));
    await this.client.send(
      new CompleteMultipartUploadCommand({
        Bucket: this.bucket,
        Key: this.key,
        UploadId: this.uploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
  }

  /**
   * Best effort, after a failure before `complete`: waits for the parts still in flight (S3 may
   * keep a part that lands after the abort) and aborts, so the earlier object under the key stays.
   * What a dead backend keeps, the lifecycle rule of docs/storage.md clears.
   */
  async abort(): Promise<void> {
    await Promise.all(this.inFlight);
    await this.client
      .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.key, UploadId: this.uploadId }))
      .catch(() => undefined);
  }
}
