import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  type TarballChecker,
  type TarballContents,
  type TarballFile,
  type TarballFileSelection,
  type TarballLimits,
  TooLargeError,
  type UnwrappedTarball,
  UnprocessableError,
} from '@trellis/core';
import { create, extract, Parser, type ReadEntry } from 'tar';

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

/** A path inside the archive's root, or the reason it is not. */
function escapes(path: string): boolean {
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path) || path.includes('\\') || path.includes('\0')) return true;
  const normal = posix.normalize(path);
  return normal === '..' || normal.startsWith('../');
}

/**
 * The configuration tarball check (issue 23, and the uploads of issue 27) with `tar`, npm's own
 * reader: gzip, then every entry read (pax and GNU long names applied), none of which may climb
 * out of the root, link out of it, or be anything but a file, a directory or a link; within the
 * limits of entries and unpacked bytes. Nothing is written anywhere: the bytes only pass through.
 */
export class TarGzChecker implements TarballChecker {
  async check(body: AsyncIterable<Uint8Array>, limits: TarballLimits): Promise<TarballContents> {
    let entries = 0;
    let unpackedBytes = 0;
    let problem: Error | null = null;
    const refuse = (message: string) => {
      problem ??= new UnprocessableError('configuration_invalid', `the configuration tarball is refused: ${message}`);
    };
    const parser = new Parser({
      strict: true,
      onReadEntry: (entry: ReadEntry) => {
        entry.resume();
        if (problem) return;
        entries += 1;
        const path = entry.path;
        if (entries > limits.maxEntries) {
          problem = new TooLargeError(
            'configuration_too_large',
            `the configuration tarball holds more than ${limits.maxEntries} entries`,
            limits.maxUnpackedBytes,
          );
          return;
        }
        if (escapes(path)) return refuse(`${JSON.stringify(path)} is outside the archive's root`);
        // Checked as the agent unpacks it: below the directories it strips (a provider's `owner-repo-sha/`).
        const inside = path
          .split('/')
          .filter((part) => part !== '' && part !== '.')
          .slice(limits.stripComponents)
          .join('/');
        if (FILE_TYPES.has(entry.type)) {
          unpackedBytes += entry.size;
          if (unpackedBytes > limits.maxUnpackedBytes) {
            problem = new TooLargeError(
              'configuration_too_large',
              `the configuration unpacks to more than ${limits.maxUnpackedBytes} bytes`,
              limits.maxUnpackedBytes,
            );
          }
          return;
        }
        if (entry.type === 'Directory') return;
        if (entry.type === 'SymbolicLink' || entry.type === 'Link') {
          const target = entry.linkpath ?? '';
          // A symbolic link resolves from its own directory; a hard link names a path of the archive.
          const resolved =
            entry.type === 'SymbolicLink'
              ? posix.join(posix.dirname(inside), target)
              : target.split('/').slice(limits.stripComponents).join('/');
          if (target === '' || target.startsWith('/') || escapes(resolved)) {
            return refuse(`${JSON.stringify(path)} links to ${JSON.stringify(target)}, outside the archive's root`);
          }
          return;
        }
        refuse(`${JSON.stringify(path)} is a ${entry.type}, not a file, directory or link`);
      },
    });
    let parseError: Error | null = null;
    parser.on('error', (error: Error) => {
      parseError ??= error;
    });
    let first = true;
    for await (const chunk of body) {
      if (first && chunk.byteLength > 0) {
        first = false;
        if (chunk.byteLength < 2 || chunk[0] !== 0x1f || chunk[1] !== 0x8b) {
          throw new UnprocessableError('configuration_invalid', 'the configuration tarball is refused: it is not gzip');
        }
      }
      if (problem || parseError) break;
      if (!parser.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))) await once(parser, 'drain');
    }
    if (first)
      throw new UnprocessableError('configuration_invalid', 'the configuration tarball is refused: it is empty');
    if (!problem && !parseError) {
      const ended = once(parser, 'end');
      parser.end();
      await Promise.race([ended, once(parser, 'error')]).catch(() => undefined);
    }
    if (problem) throw problem;
    if (parseError) {
      throw new UnprocessableError(
        'configuration_invalid',
        `the configuration tarball is refused: it is not a readable tar.gz (${(parseError as Error).message})`,
      );
    }
    return { entries, unpackedBytes };
  }

  async readFiles(body: AsyncIterable<Uint8Array>, options: TarballFileSelection): Promise<TarballFile[]> {
    const files: TarballFile[] = [];
    const parser = new Parser({
      strict: true,
      onReadEntry: (entry: ReadEntry) => {
        const inside = entry.path
          .split('/')
          .filter((part) => part !== '' && part !== '.')
          .slice(options.stripComponents)
          .join('/');
        if (!FILE_TYPES.has(entry.type) || entry.size > options.maxFileBytes || !options.select(inside)) {
          entry.resume();
          return;
        }
        const chunks: Buffer[] = [];
        entry.on('data', (chunk: Buffer) => chunks.push(chunk));
        entry.on('end', () => files.push({ path: inside, text: Buffer.concat(chunks).toString('utf8') }));
      },
    });
    let parseError: Error | null = null;
    parser.on('error', (error: Error) => {
      parseError ??= error;
    });
    for await (const chunk of body) {
      if (parseError) break;
      if (!parser.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))) await once(parser, 'drain');
    }
    if (!parseError) {
      const ended = once(parser, 'end');
      parser.end();
      await Promise.race([ended, once(parser, 'error')]).catch(() => undefined);
    }
    if (parseError) {
      throw new UnprocessableError(
        'configuration_invalid',
        `the tarball is not a readable tar.gz (${(parseError as Error).message})`,
      );
    }
    return files;
  }

  /**
   * Through a private temporary directory: the archive is written to a file (within `maxBytes`),
   * checked, unpacked below its wrapping directories, and packed again from there (portable
   * headers: no owner, no mode beyond the file's own, no timestamps of this machine).
   */
  async unwrap(
    body: AsyncIterable<Uint8Array>,
    limits: TarballLimits & { maxBytes: number },
  ): Promise<UnwrappedTarball> {
    const dir = await mkdtemp(join(tmpdir(), 'trellis-unwrap-'));
    const dispose = () => rm(dir, { recursive: true, force: true });
    try {
      const archive = join(dir, 'archive.tar.gz');
      await pipeline(limited(body, limits.maxBytes), createWriteStream(archive, { mode: 0o600 }));
      await this.check(createReadStream(archive), limits);
      const tree = join(dir, 'tree');
      await mkdir(tree);
      await extract({ file: archive, cwd: tree, strip: limits.stripComponents, preservePaths: false });
      const entries = await readdir(tree);
      if (entries.length === 0) {
        throw new UnprocessableError('configuration_invalid', 'the archive holds no files below its top directory');
      }
      const packed = create({ gzip: true, cwd: tree, portable: true }, entries.sort());
      return { body: packed as AsyncIterable<Uint8Array>, dispose };
    } catch (error) {
      await dispose();
      throw error;
    }
  }
}

/** The body, refused (`configuration_too_large`) once it passes `maxBytes`. */
async function* limited(body: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<Uint8Array> {
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      throw new TooLargeError('configuration_too_large', `the archive is larger than ${maxBytes} bytes`, maxBytes);
    }
    yield chunk;
  }
}
