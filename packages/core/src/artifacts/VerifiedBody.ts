import { createHash } from 'node:crypto';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { UnavailableError } from '../domain/errors.js';

/** What the record of an artifact says its bytes are. */
export interface ArtifactDigest {
  size: number;
  /** Lowercase hex SHA-256. */
  sha256: string;
}

/** The artifact store answered with bytes that are not the ones recorded (`503 artifact_digest_mismatch`). */
export function artifactDigestMismatch(key: string, detail: string): UnavailableError {
  return new UnavailableError(
    'artifact_digest_mismatch',
    `artifact storage returned ${JSON.stringify(key)} with ${detail}; it is not the artifact that was stored`,
  );
}

/**
 * Checks a body read from the artifact store against its record, so altered bytes are never served
 * silently. The size is checked before a byte is read (the caller has not answered yet, so the
 * mismatch is a plain error); the sha256 only once the body has been read, so the last chunk is
 * held back until the digest agrees: a reader of an altered artifact gets an error and never its
 * complete bytes.
 */
export function verifiedArtifactBody(key: string, body: Readable, size: number, expected: ArtifactDigest): Readable {
  if (size !== expected.size) {
    body.destroy();
    throw artifactDigestMismatch(key, `${size} bytes where ${expected.size} were recorded`);
  }
  const hash = createHash('sha256');
  let seen = 0;
  let held: Buffer | undefined;
  const check = new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      hash.update(chunk);
      seen += chunk.byteLength;
      const previous = held;
      held = chunk;
      done(null, previous);
    },
    flush(done: TransformCallback) {
      const sha256 = hash.digest('hex');
      if (seen !== expected.size)
        return done(artifactDigestMismatch(key, `${seen} bytes where ${expected.size} were recorded`));
      if (sha256 !== expected.sha256)
        return done(artifactDigestMismatch(key, `sha256 ${sha256} where ${expected.sha256} was recorded`));
      done(null, held);
    },
  });
  body.once('error', (error) => check.destroy(error));
  check.once('close', () => {
    if (!body.destroyed) body.destroy();
  });
  return body.pipe(check);
}
