import type { GitProvider } from '../../domain/enums.js';
import type { WebhookMode } from '../../domain/vcs.js';

/**
 * A module of the registry published from a repository's tags (issue 28): a push of a semver tag
 * (`v1.2.0`, `1.2.0`) to `repository` publishes that version of `name`/`system` in the owner's
 * namespace, from the tagged commit's tree. One repository per module; made by an admin of the
 * namespace (`registry.manage`), whose provider token creates the hook and fetches the archives
 * while they stay an admin (the borrowed-token rule of git-driven runs).
 */
export interface ModuleRepository {
  id: string;
  /** The namespace's owner (an organization, or a person); the namespace's name follows it. */
  owner_id: string;
  name: string;
  system: string;
  provider: GitProvider;
  /** `owner/name` as the provider spells it. */
  repository: string;
  webhook_mode: WebhookMode;
  /** The provider's id of the hook Trellis created (`auto`); null in `manual` mode. */
  hook_id: string | null;
  /** Sealed with the server's SecretBox for this connection only; never leaves the server after a manual connect's answer. */
  webhook_secret_sealed: string;
  connected_by: string;
  /** What the newest tag push did, for the page and `trellis modules repository`; null before the first. */
  last_tag: ModuleTagResult | null;
  created_at: string;
  updated_at: string;
}

export const MODULE_TAG_OUTCOMES = ['published', 'ignored', 'failed'] as const;
export type ModuleTagOutcome = (typeof MODULE_TAG_OUTCOMES)[number];

/** One tag push as it was handled: published, ignored (not a version tag, already published), or failed (why). */
export interface ModuleTagResult {
  tag: string;
  commit_sha: string;
  outcome: ModuleTagOutcome;
  /** The version published, when the tag is one. */
  version: string | null;
  /** Why it was ignored or failed (a problem code and sentence); null when published. */
  message: string | null;
  at: string;
}

/** Where module repositories are kept; each belongs to its namespace's owner. */
export interface ModuleRepositoryStore {
  /** Inserts, or replaces the one of the same owner, name and system (keeping its id and `created_at`). */
  put(connection: ModuleRepository): Promise<ModuleRepository>;
  get(ownerId: string, name: string, system: string): Promise<ModuleRepository | null>;
  /** The owner's module repositories, by name then system. */
  list(ownerId: string): Promise<ModuleRepository[]>;
  delete(ownerId: string, id: string): Promise<boolean>;
  /** By id alone, before any owner is known (system work: a webhook delivery names it). */
  findForDelivery(id: string): Promise<ModuleRepository | null>;
  recordTag(ownerId: string, id: string, result: ModuleTagResult): Promise<void>;
}
