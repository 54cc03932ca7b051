import type { Readable } from 'node:stream';

export interface StoredArtifact {
  size: number;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
}

/** An object as read back: its size as the store knows it, and its bytes. */
export interface ArtifactObject {
  size: number;
  body: Readable;
}

/**
 * Object storage for plan files and state versions. `put` streams: it never holds the whole
 * body, stops as soon as `maxBytes` is passed (`TooLargeError`, nothing stored, any previous
 * object under the key intact), and replaces the key atomically. A missing key is a
 * `NotFoundError`; a backend that is down or refuses credentials is an `UnavailableError`.
 * The sha256 `put` returns is kept in the record of the artifact (plan artifact, state version),
 * which is the one truth about its bytes: `get` returns them unchecked and the use case reads
 * them through `verifiedArtifactBody`, so a store needs no metadata beside the object.
 */
export interface ArtifactStore {
  put(key: string, body: AsyncIterable<Uint8Array>, options: { maxBytes: number }): Promise<StoredArtifact>;
  get(key: string): Promise<ArtifactObject>;
  delete(key: string): Promise<void>;
  /** Throws `UnavailableError` when the backend cannot be reached (for `/readyz`). */
  check(): Promise<void>;
  /** Releases what the store holds (connections, sockets); called once, on shutdown. */
  close(): Promise<void>;
}
