import { gzipSync } from 'node:zlib';

/** One entry of a test tarball: a file (with content), a directory, or a link. */
export interface TarEntry {
  path: string;
  content?: string | Uint8Array;
  type?: 'file' | 'directory' | 'symlink' | 'hardlink' | 'fifo';
  linkpath?: string;
}

const TYPE_FLAGS = { file: '0', hardlink: '1', symlink: '2', directory: '5', fifo: '6' } as const;

function field(header: Buffer, offset: number, length: number, value: string): void {
  header.write(value.slice(0, length), offset, length, 'utf8');
}

function octal(header: Buffer, offset: number, length: number, value: number): void {
  field(header, offset, length, `${value.toString(8).padStart(length - 1, '0')}\0`);
}

/**
 * A ustar archive written byte by byte, so tests can make the archives a careful tool never would
 * (`../` paths, absolute paths, links out of the root), and a pax global header like GitHub's.
 */
export function tarBytes(entries: readonly TarEntry[], options: { paxGlobalComment?: string } = {}): Buffer {
  const blocks: Buffer[] = [];
  const push = (name: string, type: string, body: Buffer, linkpath = '') => {
    const header = Buffer.alloc(512);
    field(header, 0, 100, name);
    octal(header, 100, 8, type === '5' ? 0o755 : 0o644);
    octal(header, 108, 8, 0);
    octal(header, 116, 8, 0);
    octal(header, 124, 12, body.length);
    octal(header, 136, 12, 1_700_000_000);
    header.write('        ', 148, 8, 'ascii');
    field(header, 156, 1, type);
    field(header, 157, 100, linkpath);
    header.write('ustar\u000000', 257, 8, 'binary');
    let sum = 0;
    for (const byte of header) sum += byte;
    field(header, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
    blocks.push(header, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  };
  if (options.paxGlobalComment !== undefined) {
    const record = (text: string) => {
      let length = text.length + 3;
      while (`${length} ${text}\n`.length !== length) length = `${length} ${text}\n`.length;
      return `${length} ${text}\n`;
    };
    push('pax_global_header', 'g', Buffer.from(record(`comment=${options.paxGlobalComment}`)));
  }
  for (const entry of entries) {
    const type = TYPE_FLAGS[entry.type ?? 'file'];
    const content = entry.content === undefined ? Buffer.alloc(0) : Buffer.from(entry.content);
    push(entry.path, type, type === '0' ? content : Buffer.alloc(0), entry.linkpath ?? '');
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

/** `tarBytes` gzipped: what a provider's archive API or a `tofu` upload sends. */
export function tarGz(entries: readonly TarEntry[], options: { paxGlobalComment?: string } = {}): Buffer {
  return gzipSync(tarBytes(entries, options));
}

/** A body of `bytes` as the use cases read one, in chunks. */
export async function* chunksOf(bytes: Uint8Array, size = 4096): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

/** A provider's archive of a commit holding `files`, wrapped in one directory as every provider does. */
export function providerArchive(files: Record<string, string> = { 'main.tf': '' }): {
  body: AsyncIterable<Uint8Array>;
  strip_components: number;
} {
  const bytes = tarGz(Object.entries(files).map(([path, content]) => ({ path: `repo-0123abc/${path}`, content })));
  return { body: chunksOf(bytes), strip_components: 1 };
}
