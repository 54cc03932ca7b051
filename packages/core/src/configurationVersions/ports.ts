import type { ConfigurationVersion } from './records.js';

/** Where configuration versions are recorded; their bytes live in the `ArtifactStore`. */
export interface ConfigurationVersionStore {
  /** Inserts or replaces the record of `version.id` (its status moves, its bytes never change once stored). */
  save(version: ConfigurationVersion): Promise<ConfigurationVersion>;
  get(ownerId: string, id: string): Promise<ConfigurationVersion | null>;
  /** The newest `uploaded` version of that vine's commit, to reuse (a plan and its deploy share one). */
  findUploaded(ownerId: string, vineId: string, commitSha: string): Promise<ConfigurationVersion | null>;
  /**
   * Marks the one upload of a `pending` version as begun (`upload_started_at`), only if no upload
   * began before: false when one did, or the version is no longer pending (a signed URL is used once).
   */
  startUpload(ownerId: string, id: string, at: string): Promise<boolean>;
  /** The vine's versions, newest first, at most `limit`. */
  listForVine(ownerId: string, vineId: string, limit: number): Promise<ConfigurationVersion[]>;
  /** The artifact keys of every stored version of the owner (their files go when the owner does). */
  storageKeys(ownerId: string): Promise<string[]>;
}

/** What a checked tarball holds. */
export interface TarballContents {
  entries: number;
  /** Bytes of its files once unpacked. */
  unpackedBytes: number;
}

export interface TarballLimits {
  maxUnpackedBytes: number;
  maxEntries: number;
  /** Leading directories the agent strips: paths and links are checked as they will be unpacked. */
  stripComponents: number;
}

/**
 * Reads a `.tar.gz` and checks that it is one an agent may unpack: gzip, a readable tar, no entry
 * whose path is absolute or climbs out of the root (`..`), no symbolic or hard link that points out
 * of it, only files, directories and links, and within `limits`. Throws
 * `UnprocessableError('configuration_invalid')`, or
 * `TooLargeError('configuration_too_large')` past the limits, with a sentence naming the first offending entry.
 */
export interface TarballChecker {
  check(body: AsyncIterable<Uint8Array>, limits: TarballLimits): Promise<TarballContents>;
  /**
   * The text (UTF-8) of the regular files `select` picks, by their path below `stripComponents`,
   * in one pass over an already checked tarball (the registry page reads a module's `*.tf` and
   * README, issue 28); a picked file over `maxFileBytes` is left out. Throws
   * `UnprocessableError('configuration_invalid')` when the bytes are not a readable tar.gz.
   */
  readFiles(body: AsyncIterable<Uint8Array>, options: TarballFileSelection): Promise<TarballFile[]>;
  /**
   * A provider's archive of a commit (its tree wrapped in `limits.stripComponents` directories)
   * as a `.tar.gz` of the tree at its root, as the module registry serves it (`tofu` unpacks a
   * module where it downloads it, stripping nothing). Checked as `check` does first (and refused
   * the same way); `maxBytes` bounds the archive as it arrives (`TooLargeError`).
   */
  unwrap(body: AsyncIterable<Uint8Array>, limits: TarballLimits & { maxBytes: number }): Promise<UnwrappedTarball>;
}

/** A re-packed tarball, read once; `dispose` removes what making it left behind (after reading, or instead of it). */
export interface UnwrappedTarball {
  body: AsyncIterable<Uint8Array>;
  dispose(): Promise<void>;
}

export interface TarballFileSelection {
  stripComponents: number;
  select: (path: string) => boolean;
  maxFileBytes: number;
}

export interface TarballFile {
  path: string;
  text: string;
}
