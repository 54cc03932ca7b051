import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  type ArtifactObject,
  artifactKeySegments,
  type ArtifactStore,
  NotFoundError,
  type StoredArtifact,
  TooLargeError,
  UnavailableError,
} from '@trellis/core';

interface StoredObject {
  bytes: Buffer;
}

/**
 * Object storage in memory with the streaming contract of `ArtifactStore`: it reads the body
 * chunk by chunk, hashes as it goes, stops at the first chunk past `maxBytes` and only then
 * replaces the key, so a refused upload leaves the earlier object intact.
 */
export class MemoryArtifactStore implements ArtifactStore {
  /** Set to make every call fail with `UnavailableError`, as a backend that is down. */
  unavailable = false;
  /** Chunks read by the last `put`, to check it stopped early. */
  lastPutChunksRead = 0;
  /** How many times `close()` was called. */
  closeCalls = 0;
  private readonly objects = new Map<string, StoredObject>();

  async put(key: string, body: AsyncIterable<Uint8Array>, options: { maxBytes: number }): Promise<StoredArtifact> {
    this.ensureAvailable();
    artifactKeySegments(key);
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    let size = 0;
    this.lastPutChunksRead = 0;
    for await (const chunk of body) {
      this.lastPutChunksRead += 1;
      size += chunk.byteLength;
      if (size > options.maxBytes) {
        // Leaving the loop calls the iterator's `return`, so the producer stops too.
        throw new TooLargeError(
          'artifact_too_large',
          `the artifact is larger than ${options.maxBytes} bytes`,
          options.maxBytes,
        );
      }
      hash.update(chunk);
      chunks.push(Buffer.from(chunk));
    }
    this.ensureAvailable();
    const stored = { bytes: Buffer.concat(chunks) };
    this.objects.set(key, stored);
    return { size: stored.bytes.length, sha256: hash.digest('hex') };
  }

  async get(key: string): Promise<ArtifactObject> {
    this.ensureAvailable();
    artifactKeySegments(key);
    const stored = this.objects.get(key);
    if (!stored) throw new NotFoundError('artifact');
    return { size: stored.bytes.length, body: Readable.from([Buffer.from(stored.bytes)]) };
  }

  /** Replaces an object's bytes behind the store's back, as a damaged or tampered backend would. */
  tamper(key: string, bytes: Uint8Array): void {
    if (!this.objects.has(key)) throw new Error(`no object ${key} to tamper with`);
    this.objects.set(key, { bytes: Buffer.from(bytes) });
  }

  async delete(key: string): Promise<void> {
    this.ensureAvailable();
    artifactKeySegments(key);
    this.objects.delete(key);
  }

  async check(): Promise<void> {
    this.ensureAvailable();
  }

  async close(): Promise<void> {
    this.closeCalls += 1;
  }

  /** The stored bytes of `key` (a copy), or undefined. */
  bytesOf(key: string): Buffer | undefined {
    const stored = this.objects.get(key);
    return stored ? Buffer.from(stored.bytes) : undefined;
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  private ensureAvailable(): void {
    if (this.unavailable) {
      throw new UnavailableError('artifact_store_unavailable', 'the artifact store cannot be reached');
    }
  }
}
