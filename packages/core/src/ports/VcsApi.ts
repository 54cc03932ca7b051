import type { CommitRelation, CommitStatus, HookRequest, VcsDelivery } from '../domain/vcs.js';

/**
 * One git provider's API as git-driven runs use it (issue 13), called with the connecting user's
 * stored OAuth token. `repository` is `owner/name` as in the connection. Adapters translate every
 * provider failure into a domain error: `UnauthorizedError('provider_token_expired')` when the
 * provider refuses the token (401), `ConflictError('vcs_permission_missing')` when the token lacks
 * the scope or the repository role the call needs (403, or 404 for a repository the token cannot
 * see), with a message saying what to grant, `RateLimitedError` when it rate limits, and
 * `UnavailableError('provider_unavailable')` otherwise.
 */
export interface VcsApi {
  /** The longest comment body the provider takes, in characters. */
  readonly maxCommentLength: number;
  /** Creates the repository webhook for push and pull request events; answers the provider's hook id. */
  createHook(token: string, repository: string, hook: HookRequest): Promise<{ hook_id: string }>;
  /** Deletes the hook; a hook already gone is not an error. */
  deleteHook(token: string, repository: string, hookId: string): Promise<void>;
  setCommitStatus(token: string, repository: string, sha: string, status: CommitStatus): Promise<void>;
  /**
   * Writes Trellis's comment on a pull request: edits comment `comment_id` in place when given
   * (and creates a new one if that comment was deleted), else creates one. Answers its id.
   */
  upsertPullRequestComment(
    token: string,
    repository: string,
    number: number,
    comment: { comment_id: string | null; body: string },
  ): Promise<{ comment_id: string }>;
  /**
   * The full 40-character SHA of the commit `sha` names, which may be a prefix: Bitbucket's pull
   * request payloads name the head commit by its first 12 characters, and a job checks out exactly
   * one full commit. A full SHA is answered as it is, without a call.
   */
  resolveCommit(token: string, repository: string, sha: string): Promise<string>;
  /** The files changed between two commits (the compare API), for pushes whose payload was truncated. */
  changedFiles(token: string, repository: string, baseSha: string, headSha: string): Promise<string[]>;
  /**
   * How `headSha` stands to `baseSha` (both full SHAs): `ahead` when base is a proper ancestor of
   * head, `behind` the other way round, `identical`, or `diverged`. Auto-deploy deploys only
   * commits ahead of the last one deployed (a replayed old push is behind it).
   */
  compareCommits(token: string, repository: string, baseSha: string, headSha: string): Promise<CommitRelation>;
  /**
   * The `.tar.gz` of the repository at `ref` (a full commit id, or a branch or tag) from the
   * provider's archive API (GitHub's tarball, GitLab's `repository/archive.tar.gz`, Bitbucket's
   * `get/<ref>.tar.gz`), streamed. The token goes to the provider's own address only: a redirect
   * to a download host (GitHub's codeload) is followed without it, its URL carrying its own grant.
   * Every archive wraps the tree in one top directory (`strip_components` 1 to unpack it).
   */
  fetchArchive(token: string, repository: string, ref: string): Promise<VcsArchive>;
}

/** A provider's archive of one commit, as it streams in. */
export interface VcsArchive {
  body: AsyncIterable<Uint8Array>;
  /** Leading directories around the tree (1 for every provider's archive). */
  strip_components: number;
}

/** What a webhook request carried, before Trellis trusts it. */
export interface WebhookRequestParts {
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
  /** The body exactly as received: signatures are over these bytes. */
  rawBody: Buffer;
}

/**
 * The check of one delivery's signature, fed the body chunk by chunk as it arrives (so a large
 * body is hashed in small steps, never in one long one), then asked once.
 */
export interface DeliverySignatureCheck {
  update(chunk: Uint8Array): void;
  /** Whether the body fed so far is signed with the secret (constant-time). */
  matches(): boolean;
}

/**
 * Reads one provider's webhook deliveries. The hook URL names the connection, so its secret is
 * known before the body is read: `signatureCheck` verifies the body as it streams in, and only a
 * verified body is parsed.
 */
export interface VcsWebhookReader {
  /** A check of the request's signature header against `secret`. */
  signatureCheck(headers: WebhookRequestParts['headers'], secret: string): DeliverySignatureCheck;
  /** The delivery, or null when the request is not a delivery of this provider (no event header). */
  parse(request: WebhookRequestParts): VcsDelivery | null;
}
