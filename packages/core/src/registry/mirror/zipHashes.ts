import { createHash } from 'node:crypto';
import { createInflateRaw } from 'node:zlib';
import { TooLargeError, UnprocessableError } from '../../domain/errors.js';

/**
 * The `h1:` hash OpenTofu records for a provider package (golang.org/x/mod/sumdb/dirhash `Hash1`
 * over the files of the zip, as `HashZip` reads them): a line `"<hex sha256 of the file>  <name>\n"`
 * per entry, names sorted bytewise, and `h1:` + base64 of the SHA-256 of those lines. Computed in
 * two streamed passes, so no archive is ever held whole: the first keeps only the tail of the zip
 * (where its central directory is), the second reads each entry at the offset the directory gives,
 * which also covers entries written with data descriptors (sizes after the data, as Go's zip does).
 */

/** The end of a zip the first pass keeps: the central directory of a provider holds a handful of entries. */
export const ZIP_TAIL_BYTES = 1024 * 1024;

export interface ZipLimits {
  maxEntries: number;
  /** Bytes of the files once unpacked. */
  maxUnpackedBytes: number;
}

interface CentralEntry {
  name: string;
  method: number;
  compressedSize: number;
  localOffset: number;
}

function invalidZip(detail: string): UnprocessableError {
  return new UnprocessableError('mirror_archive_invalid', `the archive is not a provider zip: ${detail}`);
}

/** Keeps the last `limit` bytes of a body as it passes through. */
export class ZipTail {
  private chunks: Buffer[] = [];
  private held = 0;
  total = 0;

  constructor(private readonly limit = ZIP_TAIL_BYTES) {}

  async *watch(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
    for await (const chunk of body) {
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      this.chunks.push(Buffer.from(bytes));
      this.held += bytes.byteLength;
      this.total += bytes.byteLength;
      while (this.chunks.length > 1 && this.held - (this.chunks[0] as Buffer).byteLength >= this.limit) {
        this.held -= (this.chunks.shift() as Buffer).byteLength;
      }
      yield chunk;
    }
  }

  /** The bytes kept and the offset in the zip of the first of them. */
  bytes(): { tail: Buffer; offset: number } {
    const tail = Buffer.concat(this.chunks);
    return { tail, offset: this.total - tail.byteLength };
  }
}

/** The entries of the central directory found in the tail of a zip of `total` bytes. */
export function centralDirectory(tail: Buffer, tailOffset: number, limits: ZipLimits): CentralEntry[] {
  let eocd = -1;
  for (let at = tail.byteLength - 22; at >= Math.max(0, tail.byteLength - 22 - 0xffff); at--) {
    if (tail.readUInt32LE(at) === 0x06054b50) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw invalidZip('no end of central directory record');
  const count = tail.readUInt16LE(eocd + 10);
  const size = tail.readUInt32LE(eocd + 12);
  const offset = tail.readUInt32LE(eocd + 16);
  if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff) throw invalidZip('zip64 is not supported');
  if (count > limits.maxEntries) {
    throw new TooLargeError(
      'mirror_archive_too_large',
      `the archive holds ${count} entries; at most ${limits.maxEntries} are allowed`,
      limits.maxUnpackedBytes,
    );
  }
  let at = offset - tailOffset;
  if (at < 0 || at + size > eocd) throw invalidZip('the central directory is out of place');
  const entries: CentralEntry[] = [];
  for (let index = 0; index < count; index++) {
    if (at + 46 > eocd || tail.readUInt32LE(at) !== 0x02014b50)
      throw invalidZip('a central directory entry is damaged');
    const flags = tail.readUInt16LE(at + 8);
    const method = tail.readUInt16LE(at + 10);
    const compressedSize = tail.readUInt32LE(at + 20);
    const nameLength = tail.readUInt16LE(at + 28);
    const extraLength = tail.readUInt16LE(at + 30);
    const commentLength = tail.readUInt16LE(at + 32);
    const localOffset = tail.readUInt32LE(at + 42);
    const name = tail.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    if (flags & 0x1) throw invalidZip(`${JSON.stringify(name)} is encrypted`);
    if (method !== 0 && method !== 8) throw invalidZip(`${JSON.stringify(name)} uses compression method ${method}`);
    if (name.includes('\n')) throw invalidZip('an entry name holds a newline');
    entries.push({ name, method, compressedSize, localOffset });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** Reads exact byte counts from a stream of chunks. */
class ByteReader {
  private buffered: Buffer = Buffer.alloc(0);
  private readonly iterator: AsyncIterator<Uint8Array>;
  position = 0;

  constructor(body: AsyncIterable<Uint8Array>) {
    this.iterator = body[Symbol.asyncIterator]();
  }

  private async fill(): Promise<boolean> {
    const next = await this.iterator.next();
    if (next.done) return false;
    this.buffered = Buffer.concat([this.buffered, next.value]);
    return true;
  }

  async read(length: number): Promise<Buffer> {
    while (this.buffered.byteLength < length) {
      if (!(await this.fill())) throw invalidZip('it ends too early');
    }
    const bytes = this.buffered.subarray(0, length);
    this.buffered = this.buffered.subarray(length);
    this.position += length;
    return bytes;
  }

  /** Hands `length` bytes to `sink` a chunk at a time. */
  async pass(length: number, sink: (chunk: Buffer) => Promise<void>): Promise<void> {
    let left = length;
    while (left > 0) {
      if (this.buffered.byteLength === 0 && !(await this.fill())) throw invalidZip('it ends too early');
      const chunk = this.buffered.subarray(0, Math.min(left, this.buffered.byteLength));
      this.buffered = this.buffered.subarray(chunk.byteLength);
      this.position += chunk.byteLength;
      left -= chunk.byteLength;
      await sink(chunk);
    }
  }

  async skipTo(position: number): Promise<void> {
    if (position < this.position) throw invalidZip('its entries overlap');
    await this.pass(position - this.position, async () => {});
  }

  async close(): Promise<void> {
    await this.iterator.return?.();
  }
}

/** SHA-256 of the unpacked bytes of one entry, counting them against `budget`. */
async function entryDigest(
  reader: ByteReader,
  entry: CentralEntry,
  budget: { left: number; limit: number },
): Promise<string> {
  const hash = createHash('sha256');
  const count = (bytes: number) => {
    budget.left -= bytes;
    if (budget.left < 0) {
      throw new TooLargeError(
        'mirror_archive_too_large',
        `the archive unpacks to more than ${budget.limit} bytes`,
        budget.limit,
      );
    }
  };
  if (entry.method === 0) {
    await reader.pass(entry.compressedSize, async (chunk) => {
      count(chunk.byteLength);
      hash.update(chunk);
    });
    return hash.digest('hex');
  }
  const inflate = createInflateRaw();
  let failure: unknown = null;
  inflate.on('data', (chunk: Buffer) => {
    try {
      count(chunk.byteLength);
      hash.update(chunk);
    } catch (error) {
      failure = error;
      inflate.destroy();
    }
  });
  const ended = new Promise<void>((resolve, reject) => {
    inflate.once('end', resolve);
    inflate.once('close', () => (failure ? reject(failure) : resolve()));
    inflate.once('error', () => reject(failure ?? invalidZip(`${JSON.stringify(entry.name)} does not inflate`)));
  });
  ended.catch(() => {});
  await reader.pass(entry.compressedSize, async (chunk) => {
    if (failure || inflate.destroyed) return;
    if (inflate.write(chunk)) return;
    // Drained, or destroyed meanwhile (over the limit, not a deflate stream): never waits forever.
    await new Promise<void>((resolve) => {
      const done = () => {
        inflate.off('drain', done);
        inflate.off('close', done);
        resolve();
      };
      inflate.once('drain', done);
      inflate.once('close', done);
    });
  });
  inflate.end();
  await ended;
  if (failure) throw failure;
  return hash.digest('hex');
}

/** The `h1:` hash of a zip (read again, whole, from `body`) whose central directory is `entries`. */
export async function zipH1(
  body: AsyncIterable<Uint8Array>,
  entries: readonly CentralEntry[],
  limits: ZipLimits,
): Promise<string> {
  const reader = new ByteReader(body);
  const budget = { left: limits.maxUnpackedBytes, limit: limits.maxUnpackedBytes };
  const digests = new Map<string, string>();
  try {
    for (const entry of [...entries].sort((a, b) => a.localOffset - b.localOffset)) {
      await reader.skipTo(entry.localOffset);
      const header = await reader.read(30);
      if (header.readUInt32LE(0) !== 0x04034b50) throw invalidZip(`no local header for ${JSON.stringify(entry.name)}`);
      await reader.read(header.readUInt16LE(26) + header.readUInt16LE(28));
      if (digests.has(entry.name)) throw invalidZip(`${JSON.stringify(entry.name)} is in it twice`);
      digests.set(entry.name, await entryDigest(reader, entry, budget));
    }
  } finally {
    await reader.close();
  }
  const names = [...digests.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const lines = names.map((name) => `${digests.get(name)}  ${name}\n`).join('');
  return `h1:${createHash('sha256').update(lines, 'utf8').digest('base64')}`;
}
