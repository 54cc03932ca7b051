import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { UsageError } from 'clipanion';

/** One zip of a `tofu providers mirror` directory and what its path says it is. */
export interface MirrorDirArchive {
  file: string;
  size: number;
  hostname: string;
  namespace: string;
  type: string;
  version: string;
  platform: string;
}

const ARCHIVE = /^terraform-provider-([a-z0-9-]+)_([^_]+)_([a-z0-9]+_[a-z0-9]+)\.zip$/;

function entries(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/**
 * The archives of a directory `tofu providers mirror <dir>` wrote:
 * `<dir>/<hostname>/<namespace>/<type>/terraform-provider-<type>_<version>_<os>_<arch>.zip` (its
 * `index.json` and `<version>.json` are the server's to make). A zip elsewhere, or whose name
 * disagrees with its folder, is a usage error naming it.
 */
export function mirrorDirArchives(root: string): MirrorDirArchive[] {
  let isDir = false;
  try {
    isDir = statSync(root).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new UsageError(`${root} is not a directory (give the one \`tofu providers mirror\` wrote)`);
  const archives: MirrorDirArchive[] = [];
  const walk = (dir: string, depth: number) => {
    for (const name of entries(dir)) {
      const path = join(dir, name);
      const stat = statSync(path);
      if (stat.isDirectory() && depth < 3) walk(path, depth + 1);
      if (!stat.isFile() || !name.endsWith('.zip')) continue;
      const parts = relative(root, path).split(sep);
      const match = ARCHIVE.exec(name);
      if (parts.length !== 4 || !match || match[1] !== parts[2]) {
        throw new UsageError(
          `${path} is not where \`tofu providers mirror\` puts a provider: <hostname>/<namespace>/<type>/terraform-provider-<type>_<version>_<os>_<arch>.zip`,
        );
      }
      const [hostname, namespace, type] = parts as [string, string, string];
      archives.push({
        file: path,
        size: stat.size,
        hostname,
        namespace,
        type,
        version: match[2] as string,
        platform: match[3] as string,
      });
    }
  };
  walk(root, 0);
  if (archives.length === 0) {
    throw new UsageError(`${root} holds no provider archive (run \`tofu providers mirror ${root}\` first)`);
  }
  return archives;
}
