import { createReadStream, mkdirSync } from 'node:fs';
import { posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { extract } from 'tar';
import { agentDiskFull, isDiskFullError, JobFailure } from './errors.js';
import { saveMeasured } from './measuredDownload.js';

/** What the claim says of the configuration version to run (issue 23). */
export interface ConfigurationVersionClaim {
  id: string;
  sha256: string;
  size: number;
  url: string;
  strip_components: number;
}

/** Where the bytes come from: the control plane, with the agent's own credentials. */
export type TarballDownload = (url: string) => Promise<{ body: ReadableStream<Uint8Array> }>;

/**
 * Downloads the configuration version into `file` (0600) and checks its size and sha256 against
 * the claim: other bytes are never unpacked.
 */
export async function downloadConfigurationVersion(
  version: ConfigurationVersionClaim,
  download: TarballDownload,
  file: string,
): Promise<void> {
  const { body } = await download(version.url);
  const { size, sha256 } = await saveMeasured(body, file);
  if (sha256 !== version.sha256 || size !== version.size) {
    throw new JobFailure(
      `configuration version ${version.id} is not the one the claim names: got ${size} bytes with sha256 ${sha256}, expected ${version.size} bytes with sha256 ${version.sha256}; nothing was run`,
    );
  }
}

/**
 * Unpacks a checked tarball into `dir` with `tar`'s safe defaults (no absolute paths, nothing
 * through `..` or through a symbolic link, owners and modes not taken from the archive beyond
 * the user's umask), and refuses any entry that is not a file, directory or a link inside it.
 */
export async function unpackConfigurationVersion(file: string, dir: string, stripComponents: number): Promise<void> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let refused: string | null = null;
  await pipeline(
    createReadStream(file),
    extract({
      cwd: dir,
      strip: stripComponents,
      strict: true,
      preserveOwner: false,
      noChmod: false,
      filter: (path, entry) => {
        const type = 'type' in entry ? entry.type : 'File';
        const inside = path
          .split('/')
          .filter((part) => part !== '')
          .slice(stripComponents)
          .join('/');
        let ok = ['File', 'OldFile', 'ContiguousFile', 'Directory', 'SymbolicLink', 'Link'].includes(type);
        if (ok && type === 'SymbolicLink') {
          const target = 'linkpath' in entry ? String(entry.linkpath ?? '') : '';
          const resolved = posix.normalize(posix.join(posix.dirname(inside), target));
          ok = target !== '' && !target.startsWith('/') && resolved !== '..' && !resolved.startsWith('../');
        }
        if (!ok) refused ??= `${path} (${type})`;
        return ok;
      },
    }),
  ).catch((error: unknown) => {
    const failed = `could not unpack the configuration version: ${(error as Error).message}`;
    throw isDiskFullError(error) ? agentDiskFull(failed) : new JobFailure(failed);
  });
  if (refused !== null) {
    throw new JobFailure(`the configuration version holds an entry this agent does not unpack: ${refused}`);
  }
}
