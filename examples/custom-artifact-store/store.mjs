// An artifact store of your own: here the objects live in a Map, as a stand-in for your
// company's object storage. It keeps the contract of core's `ArtifactStore` port, which the
// testkit's conformance suite checks (test/store.test.ts): `put` reads the body chunk by chunk,
// stops at the first chunk past `maxBytes`, and only then replaces the key.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { artifactKeySegments, NotFoundError, TooLargeError, UnavailableError } from '@trellis/core';

/** @implements {import('@trellis/core').ArtifactStore} */
export class MapArtifactStore {
  /** @type {Map<string, { bytes: Buffer, sha256: string }>} */
  #objects = new Map();
  #closed = false;

  async put(key, body, { maxBytes }) {
    this.#ensureOpen();
    // Core's key rules, the same in every store: a bad key is a `ValidationError`.
    artifactKeySegments(key);
    const hash = createHash('sha256');
    const chunks = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.byteLength;
      // Leaving the loop calls the body's `return`, so its producer stops too.
      if (size > maxBytes) {
        throw new TooLargeError('artifact_too_large', `the artifact is larger than ${maxBytes} bytes`, maxBytes);
      }
      hash.update(chunk);
      chunks.push(Buffer.from(chunk));
    }
    const object = { bytes: Buffer.concat(chunks), sha256: hash.digest('hex') };
    this.#objects.set(key, object);
    return { size: object.bytes.length, sha256: object.sha256 };
  }

  async get(key) {
    this.#ensureOpen();
    artifactKeySegments(key);
    const object = this.#objects.get(key);
    if (!object) throw new NotFoundError('artifact');
    return { size: object.bytes.length, sha256: object.sha256, body: Readable.from([object.bytes]) };
  }

  async delete(key) {
    this.#ensureOpen();
    artifactKeySegments(key);
    this.#objects.delete(key);
  }

  /** For `/readyz`: a store that cannot serve says so with an `UnavailableError`. */
  async check() {
    this.#ensureOpen();
  }

  /** Called once by the control plane's `close()`. */
  async close() {
    this.#closed = true;
  }

  get closed() {
    return this.#closed;
  }

  /** The keys stored, for the example's test. */
  keys() {
    return [...this.#objects.keys()];
  }

  #ensureOpen() {
    if (this.#closed) throw new UnavailableError('artifact_store_closed', 'the artifact store is closed');
  }
}
