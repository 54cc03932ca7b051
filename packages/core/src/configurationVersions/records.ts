import type { GitProvider } from '../domain/enums.js';

/**
 * A configuration version (issue 23, the way HCP Terraform has them): an immutable `.tar.gz` of a
 * configuration in the artifact store, with its sha256, that an agent downloads with its job's
 * credentials and runs exactly. The control plane makes one from a connected vine's commit (the
 * provider's archive API, with the connecting person's token); the Terraform Cloud protocol makes
 * one from an uploaded tarball (issue 27). Agents never see a person's provider token.
 */
export const CONFIGURATION_VERSION_SOURCES = ['git', 'upload'] as const;
export type ConfigurationVersionSource = (typeof CONFIGURATION_VERSION_SOURCES)[number];

/** `pending` while its bytes are fetched or uploaded, then `uploaded` (checked, stored) or `errored`. */
export const CONFIGURATION_VERSION_STATUSES = ['pending', 'uploaded', 'errored'] as const;
export type ConfigurationVersionStatus = (typeof CONFIGURATION_VERSION_STATUSES)[number];

export interface ConfigurationVersion {
  id: string;
  owner_id: string;
  vine_id: string;
  source: ConfigurationVersionSource;
  /** `git`: where the commit was fetched from; null for an upload. */
  provider: GitProvider | null;
  repository: string | null;
  /** `git`: the full commit id; null for an upload, or a job that names only a branch. */
  commit_sha: string | null;
  /** `git`: the branch or tag fetched when no commit is pinned. */
  ref: string | null;
  status: ConfigurationVersionStatus;
  /** Key of the tarball in the artifact store, once stored. */
  storage_key: string | null;
  /** Lowercase hex SHA-256 of the stored tarball, and its size in bytes, once `uploaded`. */
  sha256: string | null;
  size: number | null;
  /**
   * Leading path components the agent strips when it unpacks: a provider's archive wraps the tree
   * in one directory (`owner-repo-sha/`), an uploaded tarball does not (0).
   */
  strip_components: number;
  /** Why it is `errored`: a problem code (`needs_reconnect`, `configuration_invalid`, …) and a sentence. */
  error_code: string | null;
  error_message: string | null;
  /**
   * What the stock CLI asked of an upload (issue 27; false for git versions): a run of a
   * `speculative` version only plans; `auto_queue_runs`: its upload queues a run; `provisional`
   * (a saved plan, `tofu plan -out`) is kept as sent.
   */
  speculative: boolean;
  auto_queue_runs: boolean;
  provisional: boolean;
  /** When its one upload began: its signed upload URL is used once. Null before. */
  upload_started_at: string | null;
  /** The person who caused it (an upload's, a connection's); null for system work. */
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

/** What the claim of a job carries instead of any credential to the source: where its tarball is. */
export interface ConfigurationVersionRef {
  id: string;
  /** Lowercase hex SHA-256 the agent checks the downloaded bytes against. */
  sha256: string;
  size: number;
  /** Path on this control plane, downloaded with the job's worker credentials. */
  url: string;
  strip_components: number;
}

/** The path the agent running job `jobId` downloads configuration version `versionId` from. */
export function configurationVersionUrl(jobId: string, versionId: string): string {
  return `/api/jobs/${jobId}/configuration-versions/${versionId}`;
}

/** Where its bytes live in the artifact store. */
export function configurationVersionKey(ownerId: string, id: string): string {
  return `configuration-versions/${ownerId}/${id}.tar.gz`;
}

export function configurationVersionRef(version: ConfigurationVersion, jobId: string): ConfigurationVersionRef {
  return {
    id: version.id,
    sha256: version.sha256 ?? '',
    size: version.size ?? 0,
    url: configurationVersionUrl(jobId, version.id),
    strip_components: version.strip_components,
  };
}
