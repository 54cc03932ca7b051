import { UnprocessableError, ValidationError } from '../../domain/errors.js';

/**
 * Private providers of the registry (issue 28, `providers.v1`): a provider is a namespace's
 * `type` (`acme/null`); a version carries its protocols, its `SHA256SUMS` and the detached
 * signature of it, checked against one of the namespace's GPG keys when published; a platform is
 * one `os`/`arch` zip, whose sha256 is the one `SHA256SUMS` lists. Versions are immutable.
 */
export interface RegistryProvider {
  id: string;
  owner_id: string;
  type: string;
  created_by: string;
  created_at: string;
}

export interface RegistryProviderVersion {
  id: string;
  owner_id: string;
  provider_id: string;
  version: string;
  /** Plugin protocol versions, e.g. `["5.0"]`. */
  protocols: string[];
  /** The `SHA256SUMS` file as published. */
  shasums: string;
  /** Its detached signature, binary (an armored one is stored unarmored: the CLI reads binary). */
  shasums_signature: Uint8Array;
  /** The id (16 hex digits) of the namespace's key that made the signature. */
  key_id: string;
  created_by: string;
  created_at: string;
}

export interface RegistryProviderPlatform {
  id: string;
  owner_id: string;
  version_id: string;
  os: string;
  arch: string;
  filename: string;
  /** Lowercase hex sha256 of the zip. */
  shasum: string;
  size: number;
  storage_key: string;
  created_by: string;
  created_at: string;
}

/** A namespace's GPG public key: the signatures of its providers' `SHA256SUMS` are checked against these. */
export interface RegistryGpgKey {
  id: string;
  owner_id: string;
  /** The primary key's id, 16 uppercase hex digits. */
  key_id: string;
  ascii_armor: string;
  created_by: string;
  created_at: string;
}

const TYPE = /^[a-z0-9][a-z0-9-]{0,63}$/;
// Semantic versioning 2.0.0 (build metadata refused: the CLI cannot pick between two of them).
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;
const PLATFORM_PART = /^[a-z0-9]{1,32}$/;
const PROTOCOL = /^\d{1,3}\.\d{1,3}$/;
const SHASUM_LINE = /^([0-9a-f]{64}) [ *]?(\S+)$/;

/** A provider type: lowercase letters, digits and dashes (`null`, `acme-cloud`). */
export function requireProviderType(value: unknown): string {
  if (typeof value !== 'string' || !TYPE.test(value)) {
    throw new ValidationError('type must be lowercase letters, digits and dashes (at most 64)', [
      { path: 'type', message: 'must match [a-z0-9][a-z0-9-]*' },
    ]);
  }
  return value;
}

export function requireProviderVersion(value: unknown): string {
  if (typeof value !== 'string' || !SEMVER.test(value)) {
    throw new ValidationError('version must be a semantic version such as 1.2.0', [
      { path: 'version', message: 'must be a semantic version (1.2.0, 1.2.0-beta.1)' },
    ]);
  }
  return value;
}

/** `os` or `arch` of a platform: `linux`, `amd64`, … */
export function requirePlatformPart(value: unknown, path: 'os' | 'arch'): string {
  if (typeof value !== 'string' || !PLATFORM_PART.test(value)) {
    throw new ValidationError(`${path} must be lowercase letters and digits`, [
      { path, message: 'must match [a-z0-9]+' },
    ]);
  }
  return value;
}

export function requireProtocols(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 8 || !value.every((p) => PROTOCOL.test(p))) {
    throw new ValidationError('protocols must list plugin protocol versions such as "5.0" or "6.0"', [
      { path: 'protocols', message: 'must be a non-empty list of "<major>.<minor>"' },
    ]);
  }
  return [...new Set(value as string[])];
}

/** The zip's name the registry protocol and goreleaser use. */
export function providerZipName(type: string, version: string, os: string, arch: string): string {
  return `terraform-provider-${type}_${version}_${os}_${arch}.zip`;
}

export function shasumsName(type: string, version: string): string {
  return `terraform-provider-${type}_${version}_SHA256SUMS`;
}

export function shasumsSignatureName(type: string, version: string): string {
  return `${shasumsName(type, version)}.sig`;
}

/**
 * The lines of a `SHA256SUMS` file (`<sha256>  <file>`, as `sha256sum` and goreleaser write it),
 * by file name. `422 provider_shasums_invalid` for a line that is not one.
 */
export function parseShasums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') continue;
    const match = SHASUM_LINE.exec(line);
    if (!match) {
      throw new UnprocessableError(
        'provider_shasums_invalid',
        `line ${index + 1} of SHA256SUMS is not "<sha256>  <file name>"`,
      );
    }
    sums.set(match[2] as string, match[1] as string);
  }
  if (sums.size === 0) throw new UnprocessableError('provider_shasums_invalid', 'SHA256SUMS lists no file');
  return sums;
}

/** The platforms `SHA256SUMS` lists zips of, for this provider's version. */
export function platformsInShasums(
  sums: ReadonlyMap<string, string>,
  type: string,
  version: string,
): { os: string; arch: string; filename: string; shasum: string }[] {
  const prefix = `terraform-provider-${type}_${version}_`;
  const platforms = [];
  for (const [filename, shasum] of sums) {
    if (!filename.startsWith(prefix) || !filename.endsWith('.zip')) continue;
    const [os, arch, ...rest] = filename.slice(prefix.length, -'.zip'.length).split('_');
    if (rest.length > 0 || !os || !arch || !PLATFORM_PART.test(os) || !PLATFORM_PART.test(arch)) continue;
    platforms.push({ os, arch, filename, shasum });
  }
  return platforms;
}

/** Where a platform's zip is kept in the artifact store. */
export function providerZipKey(ownerId: string, versionId: string, filename: string): string {
  return `registry/providers/${ownerId}/${versionId}/${filename}`;
}
