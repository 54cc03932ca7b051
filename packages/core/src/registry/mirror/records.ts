import { ValidationError } from '../../domain/errors.js';

/**
 * The provider network mirror (issue 28): per owner, the provider packages pushed from what
 * `tofu providers mirror <dir>` wrote, served by the Provider Network Mirror Protocol at
 * `/api/registry/mirror/<namespace>/` (`<hostname>/<namespace>/<type>/index.json` and
 * `<version>.json`). An archive is immutable once pushed; its bytes live in the artifact store.
 */
export interface MirrorArchive {
  id: string;
  owner_id: string;
  /** The provider's origin registry, e.g. `registry.opentofu.org`. */
  hostname: string;
  namespace: string;
  type: string;
  version: string;
  os: string;
  arch: string;
  storage_key: string;
  size: number;
  /** Lowercase hex SHA-256 of the zip: its `zh:` hash. */
  sha256: string;
  /** The `h1:` hash of the files in the zip (`zipHashes.ts`). */
  h1: string;
  /** `pushed` by `trellis mirror push`, or `pulled` by the server from the provider's origin registry. */
  origin: MirrorArchiveOrigin;
  /** Who pushed it; null for an archive the server pulled. */
  created_by: string | null;
  created_at: string;
}

export const MIRROR_ARCHIVE_ORIGINS = ['pushed', 'pulled'] as const;
export type MirrorArchiveOrigin = (typeof MIRROR_ARCHIVE_ORIGINS)[number];

/** The source address of a provider: `hostname/namespace/type`. */
export interface ProviderAddress {
  hostname: string;
  namespace: string;
  type: string;
}

/** What one push names: which provider, version and platform the archive is. */
export interface MirrorArchiveAddress extends ProviderAddress {
  version: string;
  os: string;
  arch: string;
}

/** An archive as the API shows it (never its storage key). */
export interface MirrorArchiveView {
  id: string;
  provider: string;
  hostname: string;
  namespace: string;
  type: string;
  version: string;
  platform: string;
  size: number;
  hashes: string[];
  origin: MirrorArchiveOrigin;
  created_at: string;
  /** The person who pushed it (null: the system). */
  created_by: string | null;
}

export function providerSource(address: ProviderAddress): string {
  return `${address.hostname}/${address.namespace}/${address.type}`;
}

/** `h1:` first, as `tofu providers mirror` writes them, then `zh:`. */
export function archiveHashes(archive: Pick<MirrorArchive, 'h1' | 'sha256'>): string[] {
  return [archive.h1, `zh:${archive.sha256}`];
}

export function mirrorArchiveView(archive: MirrorArchive): MirrorArchiveView {
  return {
    id: archive.id,
    provider: providerSource(archive),
    hostname: archive.hostname,
    namespace: archive.namespace,
    type: archive.type,
    version: archive.version,
    platform: `${archive.os}_${archive.arch}`,
    size: archive.size,
    hashes: archiveHashes(archive),
    origin: archive.origin,
    created_at: archive.created_at,
    created_by: archive.created_by,
  };
}

// A registry host name, with an optional port (OpenTofu's svchost, lowercased).
const HOSTNAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:\d{1,5})?$/;
// Provider namespace and type names (OpenTofu's addrs.ParseProviderPart, lowercased).
const PART = /^[a-z0-9]([a-z0-9-_]{0,62}[a-z0-9])?$/;
const TYPE = /^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/;
// A provider version as the registry protocols accept it: semver, with an optional pre-release.
const VERSION =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;
const PLATFORM_PART = /^[a-z0-9]{1,32}$/;

function invalid(path: string, value: unknown, what: string): ValidationError {
  return new ValidationError(`${path} ${JSON.stringify(value)} is not ${what}`, [{ path, message: `must be ${what}` }]);
}

function requireMatch(path: string, value: unknown, pattern: RegExp, what: string): string {
  if (typeof value !== 'string' || !pattern.test(value.toLowerCase())) throw invalid(path, value, what);
  return value.toLowerCase();
}

export function parseProviderAddress(input: { hostname: unknown; namespace: unknown; type: unknown }): ProviderAddress {
  return {
    hostname: requireMatch('hostname', input.hostname, HOSTNAME, 'a registry host name'),
    namespace: requireMatch('provider_namespace', input.namespace, PART, 'a provider namespace'),
    type: requireMatch('type', input.type, TYPE, 'a provider type'),
  };
}

export function parseProviderVersion(value: unknown): string {
  if (typeof value !== 'string' || !VERSION.test(value)) throw invalid('version', value, 'a semantic version');
  return value;
}

/** `linux_amd64` → `{ os: 'linux', arch: 'amd64' }`. */
export function parsePlatform(value: unknown): { os: string; arch: string } {
  const [os, arch, ...rest] = typeof value === 'string' ? value.split('_') : [];
  if (rest.length > 0 || !PLATFORM_PART.test(os ?? '') || !PLATFORM_PART.test(arch ?? '')) {
    throw invalid('platform', value, 'an os_arch pair such as linux_amd64');
  }
  return { os: os as string, arch: arch as string };
}

export function parseArchiveAddress(input: {
  hostname: unknown;
  namespace: unknown;
  type: unknown;
  version: unknown;
  platform: unknown;
}): MirrorArchiveAddress {
  return {
    ...parseProviderAddress(input),
    version: parseProviderVersion(input.version),
    ...parsePlatform(input.platform),
  };
}

/** The file name `tofu providers mirror` gives a package: `terraform-provider-<type>_<version>_<os>_<arch>.zip`. */
export function archiveFileName(archive: Pick<MirrorArchiveAddress, 'type' | 'version' | 'os' | 'arch'>): string {
  return `terraform-provider-${archive.type}_${archive.version}_${archive.os}_${archive.arch}.zip`;
}

/** Largest archive a push may send, and what it may unpack to. */
export interface MirrorLimits {
  maxArchiveBytes: number;
  maxUnpackedBytes: number;
  maxEntries: number;
}

export const DEFAULT_MIRROR_LIMITS: MirrorLimits = {
  maxArchiveBytes: 512 * 1024 * 1024,
  maxUnpackedBytes: 2 * 1024 * 1024 * 1024,
  maxEntries: 1000,
};

/** The mirror's settings: the limits of an archive (pushed or pulled), and its pull-through. */
export interface MirrorSettings extends MirrorLimits {
  /**
   * The provider hostnames (`registry.opentofu.org`, `registry.example.com:8443`, lowercase) whose
   * providers the mirror pulls from their origin registry on demand; empty: pull-through is off.
   */
  upstreams: readonly string[];
}

export const DEFAULT_MIRROR_SETTINGS: MirrorSettings = { ...DEFAULT_MIRROR_LIMITS, upstreams: [] };

/** `registry.opentofu.org` or `host:port`, lowercase: what `TRELLIS_MIRROR_UPSTREAM` lists. */
export function isRegistryHostname(value: string): boolean {
  return HOSTNAME.test(value) && value === value.toLowerCase();
}
