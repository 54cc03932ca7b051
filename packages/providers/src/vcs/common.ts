import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import {
  type CommitRelation,
  ConflictError,
  type DeliverySignatureCheck,
  isFullCommitSha,
  UnavailableError,
  ValidationError,
  type WebhookRequestParts,
} from '@trellis/core';

/** What a git API adapter is built from: no OAuth client, only where the API is. */
export interface VcsApiOptions {
  /** Self-hosted installations (GitHub Enterprise Server, self-managed GitLab) and test servers. */
  baseUrl?: string | null;
  /**
   * The API's root itself (`TRELLIS_<PROVIDER>_API_URL`), when it is not where `baseUrl` puts it:
   * a proxy in front of the API, a test server. Wins over the address derived from `baseUrl`.
   */
  apiUrl?: string | null;
  /** Per request (default 10 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  displayName?: string;
}

/** The SHA a provider sends for "no commit": the `before` of a new branch, the `after` of a deletion. */
export const ZERO_SHA = '0000000000000000000000000000000000000000';

/** Equal strings, compared in constant time; strings of different lengths are unequal (no throw). */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}

/**
 * The check of `header` = `sha256=<hex HMAC-SHA256(secret, body)>` (GitHub, Bitbucket), fed the
 * body as it streams in. Without a header (or a secret) nothing is hashed and it never matches.
 */
export function hmacSha256Check(header: string | undefined, secret: string): DeliverySignatureCheck {
  const hmac = typeof header === 'string' && secret !== '' ? createHmac('sha256', secret) : null;
  let digest: string | null = null;
  return {
    update(chunk) {
      if (digest === null) hmac?.update(chunk);
    },
    matches() {
      if (hmac === null || typeof header !== 'string') return false;
      digest ??= `sha256=${hmac.digest('hex')}`;
      return constantTimeEqual(header.trim().toLowerCase(), digest);
    },
  };
}

/** The check of a token header equal to the secret (GitLab): nothing to hash. */
export function tokenCheck(token: string | undefined, secret: string): DeliverySignatureCheck {
  return {
    update() {},
    matches: () => typeof token === 'string' && secret !== '' && constantTimeEqual(token, secret),
  };
}

/** The header, whatever case its name came in (Node lower-cases them; other callers may not). */
export function headerOf(request: Pick<WebhookRequestParts, 'headers'>, name: string): string | undefined {
  const direct = request.headers[name];
  if (direct !== undefined) return direct;
  for (const [key, value] of Object.entries(request.headers)) {
    if (key.toLowerCase() === name) return value;
  }
  return undefined;
}

/**
 * The JSON object of a delivery. A body that is not one is a malformed request (`400`): the
 * route answers it before looking up any connection, so it tells the sender nothing.
 */
export function payloadOf(request: WebhookRequestParts, provider: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(request.rawBody.toString('utf8'));
  } catch {
    throw new ValidationError(`the ${provider} webhook body is not JSON`, [{ path: 'body', message: 'not JSON' }]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(`the ${provider} webhook body is not a JSON object`, [
      { path: 'body', message: 'not an object' },
    ]);
  }
  return value as Record<string, unknown>;
}

/** Reads typed fields out of an untrusted payload; a missing or mistyped one is a ValidationError. */
export class PayloadReader {
  constructor(private readonly provider: string) {}

  private at(root: unknown, path: string): unknown {
    let value: unknown = root;
    for (const key of path.split('.')) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
      value = (value as Record<string, unknown>)[key];
    }
    return value;
  }

  private fail(path: string, expected: string): never {
    throw new ValidationError(`the ${this.provider} webhook payload has no ${expected} at ${path}`, [
      { path, message: `expected ${expected}` },
    ]);
  }

  string(root: unknown, path: string): string {
    const value = this.at(root, path);
    if (typeof value !== 'string' || value === '') this.fail(path, 'string');
    return value;
  }

  optionalString(root: unknown, path: string): string | null {
    const value = this.at(root, path);
    return typeof value === 'string' && value !== '' ? value : null;
  }

  integer(root: unknown, path: string): number {
    const value = this.at(root, path);
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) this.fail(path, 'integer');
    return value;
  }

  optionalNumber(root: unknown, path: string): number | null {
    const value = this.at(root, path);
    return typeof value === 'number' && Number.isFinite(value) ? value : null;
  }

  boolean(root: unknown, path: string): boolean {
    return this.at(root, path) === true;
  }

  list(root: unknown, path: string): unknown[] {
    const value = this.at(root, path);
    if (!Array.isArray(value)) this.fail(path, 'list');
    return value;
  }

  optionalList(root: unknown, path: string): unknown[] | null {
    const value = this.at(root, path);
    return Array.isArray(value) ? value : null;
  }

  object(root: unknown, path: string): Record<string, unknown> | null {
    const value = this.at(root, path);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  }
}

/** Paths in first-seen order, each once. */
export function uniquePaths(paths: Iterable<string | null | undefined>): string[] {
  const seen = new Set<string>();
  for (const path of paths) if (typeof path === 'string' && path !== '') seen.add(path);
  return [...seen];
}

/** `text` cut to `max` characters, ending with `…` when cut. */
export function truncateText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `owner/name` → its two parts, each URL-encoded; anything else is a programming error upstream. */
export function ownerAndName(repository: string): [string, string] {
  const parts = repository.split('/');
  if (parts.length !== 2 || !parts[0] || !parts[1]) {
    throw new ValidationError(`the repository must be owner/name, got ${JSON.stringify(repository)}`, [
      { path: 'repository', message: 'expected owner/name' },
    ]);
  }
  return [encodeURIComponent(parts[0]), encodeURIComponent(parts[1])];
}

/**
 * A short stable key of at most `max` characters: the text itself when it fits, else its head and
 * 8 hex characters of its SHA-256 (so two long contexts with the same head still differ).
 */
export function shortKey(text: string, max: number): string {
  if (text.length <= max) return text;
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 8);
  return `${text.slice(0, max - 9)}-${hash}`;
}

/** What a call needs, for the message of `vcs_permission_missing`. */
export type VcsAction =
  | 'create a webhook'
  | 'delete a webhook'
  | 'set a commit status'
  | 'comment'
  | 'compare'
  | 'download an archive';

/** How long the download of one commit's archive may take, body included. */
export const ARCHIVE_TIMEOUT_MS = 120_000;

/** The `409 vcs_permission_missing` of a 403 (scope or role missing) or 404 (repository not visible). */
export function permissionMissing(
  provider: string,
  repository: string,
  action: VcsAction,
  status: number,
  grant: string,
): ConflictError {
  const manual = action === 'create a webhook' ? '; or connect with a manual webhook (webhook: "manual")' : '';
  const why = status === 404 ? 'cannot see the repository' : 'was refused';
  return new ConflictError(
    'vcs_permission_missing',
    `${provider} ${why} (${status}) when Trellis tried to ${action} on ${repository}: ${grant}${manual}`,
  );
}

/**
 * How `head` stands to `base`, from their merge base (GitLab and Bitbucket answer the merge base,
 * not the relation): base itself, head itself, or another commit; null when they share no history.
 */
export function relationOf(base: string, head: string, mergeBase: string | null): CommitRelation {
  if (base === head) return 'identical';
  if (mergeBase === base) return 'ahead';
  if (mergeBase === head) return 'behind';
  return 'diverged';
}

/** A commit's full SHA from a provider's answer, or `provider_unavailable` when it named none. */
export function fullShaOf(provider: string, value: unknown): string {
  if (typeof value !== 'string' || !isFullCommitSha(value.toLowerCase())) {
    throw new UnavailableError('provider_unavailable', `${provider} answered the commit without its full SHA`);
  }
  return value.toLowerCase();
}

/** A numeric account id of a payload as sign-in records it (a decimal string); null when absent. */
export function idOf(id: number | null): string | null {
  return id === null ? null : String(id);
}
