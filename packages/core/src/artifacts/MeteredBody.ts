import { createHash } from 'node:crypto';
import { TooLargeError } from '../domain/errors.js';

/**
 * Pulls an artifact body chunk by chunk, counting and hashing as it goes, and stops with
 * `TooLargeError` (closing the source, so its producer stops too) as soon as the count passes the
 * limit. `next()` hands a chunk on as it came, valid until the next call (a producer may reuse its
 * buffer from then on); `readHead()`/`rest()` hand on copies, for SDKs that keep earlier chunks.
 *
 * Shared by the object-storage adapters of the `ArtifactStore` port, which may depend on core only.
 */
export class MeteredBody {
  size = 0;
  /** What ended the body early: its own error, or `TooLargeError`. It wins over the SDK's error. */
  failure: unknown;
  /** True once the source said it has no more chunks (and nothing failed). */
  complete = false;
  private readonly iterator: AsyncIterator<Uint8Array>;
  private readonly hash = createHash('sha256');
  /** The source finished by itself (done or threw): `return()` is not needed. */
  private sourceFinished = false;
  private stopped = false;

  constructor(
    body: AsyncIterable<Uint8Array>,
    readonly maxBytes: number,
  ) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
      throw new RangeError('maxBytes must be a non-negative integer');
    this.iterator = body[Symbol.asyncIterator]();
  }

  /** The next chunk, valid until the next call, or null at the end of the body. */
  async next(): Promise<Uint8Array | null> {
    if (this.failure !== undefined) throw this.failure;
    if (this.complete || this.stopped) return null;
    let result: IteratorResult<Uint8Array>;
    try {
      result = await this.iterator.next();
    } catch (error) {
      this.sourceFinished = true;
      this.failure = error;
      throw error;
    }
    if (result.done) {
      this.sourceFinished = true;
      this.complete = true;
      return null;
    }
    const chunk = result.value;
    this.size += chunk.byteLength;
    if (this.size > this.maxBytes) {
      this.failure = new TooLargeError(
        'artifact_too_large',
        `artifact is larger than the limit of ${this.maxBytes} bytes`,
        this.maxBytes,
      );
      await this.stop();
      throw this.failure;
    }
    this.hash.update(chunk);
    return chunk;
  }

  /** Reads copies until more than `bytes` are held or the body ends (`complete` then says which). */
  async readHead(bytes: number): Promise<Buffer[]> {
    const head: Buffer[] = [];
    let held = 0;
    while (held <= bytes) {
      const chunk = await this.next();
      if (chunk === null) break;
      head.push(Buffer.from(chunk));
      held += chunk.byteLength;
    }
    return head;
  }

  /** `head`, then the rest of the body, letting go of each chunk of `head` as it is handed on. */
  async *rest(head: Buffer[]): AsyncGenerator<Buffer> {
    while (head.length > 0) yield head.shift() as Buffer;
    for (;;) {
      const chunk = await this.next();
      if (chunk === null) return;
      yield Buffer.from(chunk);
    }
  }

  /** Lowercase hex SHA-256 of the whole body; call once, after `complete`. */
  digest(): string {
    return this.hash.digest('hex');
  }

  /** Stops the source through its `return()` unless it finished by itself. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.sourceFinished) return;
    try {
      await this.iterator.return?.();
    } catch {
      // The producer failed while stopping; the upload has failed already.
    }
  }
}
