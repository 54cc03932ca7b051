import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { isConfigurationDirectory, isConfigurationFile } from '@trellis/core';
import { UsageError } from 'clipanion';

/** The server's limit on inline sources (core `MAX_INLINE_SOURCE_BYTES`). */
export const MAX_INLINE_BYTES = 5 * 1024 * 1024;

/**
 * The files of a local OpenTofu/Terraform directory, keyed by their path relative to it (with
 * `/`), for an inline source. Skips `.terraform/` and every other dotted entry (except the
 * dependency lock file), state files and anything else that is not configuration.
 */
export function readLocalSource(directory: string): Record<string, string> {
  let root: ReturnType<typeof statSync>;
  try {
    root = statSync(directory);
  } catch {
    throw new UsageError(`--dir ${directory}: no such directory`);
  }
  if (!root.isDirectory()) throw new UsageError(`--dir ${directory}: not a directory`);

  const files: Record<string, string> = {};
  let total = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (isConfigurationDirectory(entry.name)) walk(full);
      } else if (entry.isFile() && isConfigurationFile(entry.name)) {
        const content = readFileSync(full, 'utf8');
        total += Buffer.byteLength(content, 'utf8');
        files[relative(directory, full).split(sep).join('/')] = content;
      }
    }
  };
  walk(directory);
  if (!Object.keys(files).some((name) => name.endsWith('.tf') || name.endsWith('.tf.json'))) {
    throw new UsageError(`--dir ${directory}: no .tf or .tf.json files found`);
  }
  if (total > MAX_INLINE_BYTES) {
    throw new UsageError(
      `--dir ${directory}: the configuration is ${total} bytes, over the ${MAX_INLINE_BYTES}-byte limit of inline sources; use a git source`,
    );
  }
  return files;
}
