import {
  createReadStream,
  createWriteStream,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { CliError } from '../../errors.js';
import { ExitCode } from '../../exitCodes.js';

/** A mistake in what was typed (exit code 2), naming it. */
function usage(message: string): CliError {
  return new CliError(message, ExitCode.USAGE);
}

/** What is never packed, whatever `.terraformignore` says (as OpenTofu and HCP do). */
const ALWAYS_IGNORED = ['.git/', '.terraform/'];

interface IgnoreRule {
  pattern: RegExp;
  negated: boolean;
  directoryOnly: boolean;
}

/** A `.terraformignore` glob as a regular expression over a `/`-separated relative path. */
function globToRegExp(glob: string, anchored: boolean): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i += 1) {
    const char = glob[i] as string;
    if (char === '*' && glob[i + 1] === '*') {
      // `**/` matches any number of directories, a trailing `**` everything below.
      source += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${anchored ? '' : '(?:.*/)?'}${source}$`);
}

/** The rules of a `.terraformignore` (gitignore-like): `#` comments, `!` re-includes, `/` anchors or marks directories. */
export function parseIgnoreFile(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of [...ALWAYS_IGNORED, ...text.split(/\r?\n/)]) {
    let line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    if (negated) line = line.slice(1);
    const directoryOnly = line.endsWith('/');
    if (directoryOnly) line = line.slice(0, -1);
    const anchored = line.startsWith('/') || line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    if (line === '') continue;
    rules.push({ pattern: globToRegExp(line, anchored), negated, directoryOnly });
  }
  return rules;
}

/** Whether the last matching rule excludes `path` (relative, `/`-separated). */
export function isIgnored(rules: readonly IgnoreRule[], path: string, isDirectory: boolean): boolean {
  let ignored = false;
  for (const rule of rules) {
    if (rule.directoryOnly && !isDirectory) continue;
    if (rule.pattern.test(path)) ignored = !rule.negated;
  }
  return ignored;
}

/** The files and directories of a module directory that are packed, honouring its `.terraformignore`. */
export function moduleEntries(directory: string): string[] {
  const ignoreFile = join(directory, '.terraformignore');
  const rules = parseIgnoreFile(existsSync(ignoreFile) ? readFileSync(ignoreFile, 'utf8') : '');
  const entries: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(dir, entry.name);
      const path = relative(directory, full).split(sep).join('/');
      if (isIgnored(rules, path, entry.isDirectory())) continue;
      if (entry.isDirectory()) {
        entries.push(`${path}/`);
        walk(full);
      } else if (entry.isFile() || entry.isSymbolicLink()) entries.push(path);
    }
  };
  walk(directory);
  return entries;
}

/** A packed module: its `.tar.gz` in a temporary file, to stream from. */
export interface PackedModule {
  file: string;
  size: number;
  entries: number;
  remove(): void;
}

/**
 * Packs a module directory into a `.tar.gz` with its files at the root (what `tofu init`
 * unpacks as the module), honouring `.terraformignore`; links are kept as links (the server
 * refuses one that points out of the module).
 */
export async function packModule(directory: string): Promise<PackedModule> {
  let root: ReturnType<typeof statSync>;
  try {
    root = statSync(directory);
  } catch {
    throw usage(`${directory}: no such directory`);
  }
  if (!root.isDirectory()) throw usage(`${directory}: not a directory`);
  const entries = moduleEntries(directory).filter((entry) => !entry.endsWith('/'));
  if (!entries.some((entry) => /\.tf(\.json)?$/.test(entry))) {
    throw usage(`${directory}: no .tf or .tf.json files to publish`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'trellis-module-'));
  const file = join(dir, 'module.tar.gz');
  await pipeline(tarStream(directory, entries), createGzip(), createWriteStream(file, { mode: 0o600 }));
  return {
    file,
    size: statSync(file).size,
    entries: entries.length,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A ustar header: `name` split into prefix and name when long, mode, size, type and link target. */
function tarHeader(path: string, size: number, type: '0' | '2', linkpath = ''): Buffer {
  const header = Buffer.alloc(512);
  let name = path;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const cut = path.lastIndexOf('/', path.length - 1);
    prefix = path.slice(0, cut);
    name = path.slice(cut + 1);
  }
  if (Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155 || Buffer.byteLength(linkpath) > 100) {
    throw new CliError(`${path}: the path is too long to pack (at most 255 bytes, 100 per name)`);
  }
  const octal = (offset: number, length: number, value: number) =>
    header.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'ascii');
  header.write(name, 0, 100, 'utf8');
  octal(100, 8, type === '2' ? 0o777 : 0o644);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, size);
  octal(136, 12, 0);
  header.write('        ', 148, 8, 'ascii');
  header.write(type, 156, 1, 'ascii');
  header.write(linkpath, 157, 100, 'utf8');
  header.write('ustar\u000000', 257, 8, 'binary');
  header.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return header;
}

/** The tar stream of `entries` (files and links, read one at a time; directories are implied). */
async function* tarStream(directory: string, entries: readonly string[]): AsyncGenerator<Buffer> {
  for (const entry of entries) {
    const full = join(directory, ...entry.split('/'));
    const stat = lstatSync(full);
    if (stat.isSymbolicLink()) {
      yield tarHeader(entry, 0, '2', readlinkSync(full));
      continue;
    }
    yield tarHeader(entry, stat.size, '0');
    let written = 0;
    for await (const chunk of createReadStream(full)) {
      written += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
    if (written !== stat.size) throw new CliError(`${entry} changed while it was packed; publish again`);
    if (written % 512 !== 0) yield Buffer.alloc(512 - (written % 512));
  }
  yield Buffer.alloc(1024);
}
