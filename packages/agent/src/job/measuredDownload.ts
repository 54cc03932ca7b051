import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

/** Writes a download to `file` (0600) and tells its size and sha256, measured as it passed. */
export async function saveMeasured(
  body: ReadableStream<Uint8Array>,
  file: string,
): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  const measure = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(
    Readable.fromWeb(body as WebReadableStream<Uint8Array>),
    measure,
    createWriteStream(file, { mode: 0o600 }),
  );
  return { size, sha256: hash.digest('hex') };
}
