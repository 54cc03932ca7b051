/**
 * On-disk layout of one object: a fixed-size text header, then the artifact's bytes.
 *
 *     trellis-artifact/1 size=<decimal> sha256=<64 lowercase hex><spaces>\n   (128 bytes)
 *     <size bytes of the artifact>
 *
 * Why the metadata lives inside the object file rather than beside it: a single `rename(2)` then
 * commits the bytes and their sha256 together, so no reader can ever pair a new body with an old
 * digest. A sidecar needs two renames, with a window (and, after a crash, a lasting state) where
 * the two disagree; one directory per key cannot be swapped atomically either, because `rename(2)`
 * refuses to replace a non-empty directory. A reader also gets the header and the body from the
 * same open file descriptor, which pins one version even while a writer replaces or deletes the
 * key. The cost: the file is not a bare copy of the artifact (`tail -c +129` recovers it).
 */
export const HEADER_BYTES = 128;

const FORMAT = 'trellis-artifact/1';
const HEADER_PATTERN = /^trellis-artifact\/1 size=(0|[1-9][0-9]{0,15}) sha256=([0-9a-f]{64}) *\n$/;

export interface ArtifactHeader {
  size: number;
  sha256: string;
}

export function encodeHeader({ size, sha256 }: ArtifactHeader): Buffer {
  const line = `${FORMAT} size=${size} sha256=${sha256}`;
  const header = Buffer.from(`${line.padEnd(HEADER_BYTES - 1, ' ')}\n`, 'latin1');
  if (header.length !== HEADER_BYTES || !HEADER_PATTERN.test(header.toString('latin1'))) {
    throw new Error(`cannot encode artifact header for size ${size} and sha256 ${sha256}`);
  }
  return header;
}

/** Returns undefined when the bytes are not a header this version wrote. */
export function decodeHeader(bytes: Buffer): ArtifactHeader | undefined {
  const match = HEADER_PATTERN.exec(bytes.toString('latin1'));
  if (!match) return undefined;
  const size = Number(match[1]);
  if (!Number.isSafeInteger(size)) return undefined;
  return { size, sha256: match[2]! };
}
