import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from 'clipanion';

/** A platform's zip in a release directory. */
export interface DistZip {
  os: string;
  arch: string;
  path: string;
  size: number;
}

/** What `providers publish` reads of a release directory (goreleaser's `dist/`, what `tofu` expects). */
export interface ProviderDist {
  shasums: string;
  signature: Buffer;
  zips: DistZip[];
}

/**
 * Reads `terraform-provider-<type>_<version>_SHA256SUMS`, its `.sig` and every
 * `terraform-provider-<type>_<version>_<os>_<arch>.zip` of `dir`; a usage error names what is missing.
 */
export function readProviderDist(dir: string, type: string, version: string): ProviderDist {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    throw new UsageError(`cannot read the directory "${dir}"`);
  }
  const prefix = `terraform-provider-${type}_${version}_`;
  const shasumsName = `${prefix}SHA256SUMS`;
  for (const needed of [shasumsName, `${shasumsName}.sig`]) {
    if (!names.includes(needed)) throw new UsageError(`${dir} has no ${needed}`);
  }
  const zips: DistZip[] = [];
  for (const name of names) {
    const match = new RegExp(`^${escapeRegExp(prefix)}([a-z0-9]+)_([a-z0-9]+)\\.zip$`).exec(name);
    if (!match) continue;
    const path = join(dir, name);
    zips.push({ os: match[1] as string, arch: match[2] as string, path, size: statSync(path).size });
  }
  if (zips.length === 0) throw new UsageError(`${dir} has no ${prefix}<os>_<arch>.zip`);
  return {
    shasums: readFileSync(join(dir, shasumsName), 'utf8'),
    signature: readFileSync(join(dir, `${shasumsName}.sig`)),
    zips: zips.sort((a, b) => `${a.os}_${a.arch}`.localeCompare(`${b.os}_${b.arch}`)),
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
