import type { Readable } from 'node:stream';

export interface StoredArtifact {
  size: number;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
}

/**
 * Object storage for plan files and state versions. `put` streams: it never holds the whole
 * body, stops as soon as `maxBytes` is passed (`TooLargeError`, nothing stored, any previous
 * object under the key intact), and replaces the key atomically. A missing key is a
 * `NotFoundError`; a backend that is down or refuses credentials is an `UnavailableError`.
 */
export interface ArtifactStore {
  put(key: string, body: AsyncIterable<Uint8Array>, options: { maxBytes: number }): Promise<StoredArtifact>;
  get(key: string): Promise<StoredArtifact & { body: Readable }>;
  delete(key: string): Promise<void>;
  /** Throws `UnavailableError` when the backend cannot be reached (for `/readyz`). */
  check(): Promise<void>;
  /** Releases what the store holds (connections, sockets); called once, on shutdown. */
  close(): Promise<void>;
}
