import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { centralDirectory, TooLargeError, UnprocessableError, ZipTail, zipH1 } from '@trellis/core';
import { afterAll, describe, expect, it } from 'vitest';

const LIMITS = { maxEntries: 100, maxUnpackedBytes: 64 * 1024 * 1024 };
const dir = mkdtempSync(join(tmpdir(), 'trellis-ziphash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The files of a provider package: a binary (incompressible), a text file, one in a subdirectory.
const FILES: Record<string, Buffer> = {
  'terraform-provider-null_v3.2.4_x5': randomBytes(300_000),
  'LICENSE.txt': Buffer.from('Mozilla Public License 2.0\n'.repeat(200)),
  'docs/README.md': Buffer.from('# null\n'),
};
const source = join(dir, 'files');
for (const [name, bytes] of Object.entries(FILES)) {
  mkdirSync(join(source, name, '..'), { recursive: true });
  writeFileSync(join(source, name), bytes);
}

/** dirhash Hash1, computed here from the files themselves (not from the zip). */
function expectedH1(): string {
  const lines = Object.keys(FILES)
    .sort()
    .map(
      (name) =>
        `${createHash('sha256')
          .update(FILES[name] as Buffer)
          .digest('hex')}  ${name}\n`,
    )
    .join('');
  return `h1:${createHash('sha256').update(lines).digest('base64')}`;
}

function* chunksOf(bytes: Buffer, size: number): Iterable<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size);
}

async function* stream(bytes: Buffer, size = 4096): AsyncIterable<Uint8Array> {
  yield* chunksOf(bytes, size);
}

async function h1Of(zip: Buffer, limits = LIMITS): Promise<string> {
  const tail = new ZipTail();
  for await (const _ of tail.watch(stream(zip, 777))) {
    // the first pass: what the artifact store reads
  }
  const { tail: bytes, offset } = tail.bytes();
  return zipH1(stream(zip, 1000), centralDirectory(bytes, offset, limits), limits);
}

describe('the h1: hash of a provider zip (dirhash Hash1)', () => {
  it('is the hash of the files inside, for a zip with sizes in its local headers (Info-ZIP), deflated or stored', async () => {
    for (const [name, level] of [
      ['deflated.zip', '-6'],
      ['stored.zip', '-0'],
    ] as const) {
      execFileSync('zip', ['-q', '-r', '-D', level, join(dir, name), '.'], { cwd: source });
      expect(await h1Of(readFileSync(join(dir, name)))).toBe(expectedH1());
    }
  });

  it('is the same for a zip written as a stream, with data descriptors (sizes after the data, as Go writes)', async () => {
    const script = [
      'import sys, zipfile, os',
      'z = zipfile.ZipFile(sys.stdout.buffer, "w", zipfile.ZIP_DEFLATED)',
      'for name in sys.argv[1:]:',
      '    z.write(os.path.join("files", name), name)',
      'z.close()',
    ].join('\n');
    const zip = execFileSync('python3', ['-c', script, ...Object.keys(FILES)], { cwd: dir });
    expect(zip.readUInt16LE(6) & 0x8).toBe(0x8); // the first entry has a data descriptor
    expect(await h1Of(zip)).toBe(expectedH1());
  });

  it('refuses what is not a zip, a zip over the unpacked limit, and one with more entries than allowed', async () => {
    execFileSync('zip', ['-q', '-r', '-D', join(dir, 'limits.zip'), '.'], { cwd: source });
    const zip = readFileSync(join(dir, 'limits.zip'));
    await expect(h1Of(Buffer.from('not a zip at all, just some text'.repeat(10)))).rejects.toThrow(UnprocessableError);
    await expect(h1Of(zip, { maxEntries: 100, maxUnpackedBytes: 100_000 })).rejects.toThrow(TooLargeError);
    await expect(h1Of(zip, { maxEntries: 2, maxUnpackedBytes: LIMITS.maxUnpackedBytes })).rejects.toMatchObject({
      code: 'mirror_archive_too_large',
    });
    // A zip whose directory says more than its bytes hold is refused, not misread.
    const cut = Buffer.concat([zip.subarray(0, 1000), zip.subarray(zip.byteLength - 200)]);
    await expect(h1Of(cut)).rejects.toMatchObject({ code: 'mirror_archive_invalid' });
  });
});
