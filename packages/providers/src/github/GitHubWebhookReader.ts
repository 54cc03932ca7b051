import type {
  DeliverySignatureCheck,
  VcsDelivery,
  VcsEvent,
  VcsWebhookReader,
  WebhookRequestParts,
} from '@trellis/core';
import { ValidationError } from '@trellis/core';
import { headerOf, hmacSha256Check, PayloadReader, payloadOf, uniquePaths, ZERO_SHA, idOf } from '../vcs/common.js';

/**
 * GitHub's webhook deliveries list at most 2048 commits (20 in GitHub Enterprise Server's older
 * releases and in timeline events) and at most 5000 paths in each of `added`, `removed` and
 * `modified`. A push at any of these counts may be cut, so its files are read from compare instead.
 */
const COMMITS_MAYBE_CUT = 20;
const PATHS_MAYBE_CUT = 5000;

const PULL_REQUEST_ACTIONS: Record<string, 'opened' | 'updated' | 'reopened'> = {
  opened: 'opened',
  synchronize: 'updated',
  reopened: 'reopened',
};

const read = new PayloadReader('GitHub');

/**
 * Reads GitHub deliveries (`X-GitHub-Event`, `X-GitHub-Delivery`), signed with
 * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`.
 */
export class GitHubWebhookReader implements VcsWebhookReader {
  parse(request: WebhookRequestParts): VcsDelivery | null {
    const name = headerOf(request, 'x-github-event');
    if (!name) return null;
    const deliveryId = headerOf(request, 'x-github-delivery');
    if (!deliveryId) {
      throw new ValidationError('the GitHub delivery has no X-GitHub-Delivery header', [
        { path: 'headers.x-github-delivery', message: 'missing' },
      ]);
    }
    return { provider: 'github', delivery_id: deliveryId, event: eventOf(name, request) };
  }

  signatureCheck(headers: WebhookRequestParts['headers'], secret: string): DeliverySignatureCheck {
    return hmacSha256Check(headerOf({ headers }, 'x-hub-signature-256'), secret);
  }
}

function eventOf(name: string, request: WebhookRequestParts): VcsEvent {
  if (name === 'ping') return { kind: 'ping' };
  if (name === 'push') return pushOf(payloadOf(request, 'GitHub'));
  if (name === 'pull_request') {
    const payload = payloadOf(request, 'GitHub');
    const action = PULL_REQUEST_ACTIONS[read.string(payload, 'action')];
    if (!action) return { kind: 'other', name: `pull_request.${read.string(payload, 'action')}` };
    return {
      kind: 'pull_request',
      action,
      repository: read.string(payload, 'repository.full_name'),
      number: read.integer(payload, 'pull_request.number'),
      title: read.optionalString(payload, 'pull_request.title') ?? '',
      url: read.string(payload, 'pull_request.html_url'),
      head_sha: read.string(payload, 'pull_request.head.sha'),
      head_branch: read.string(payload, 'pull_request.head.ref'),
      base_branch: read.string(payload, 'pull_request.base.ref'),
      author: read.optionalString(payload, 'pull_request.user.login') ?? '',
      fork: isFork(payload),
    };
  }
  return { kind: 'other', name };
}

/**
 * A pull request whose head repository is not its base repository: GitHub's `head.repo` is
 * another repository, or null when the fork was deleted (then it is a fork all the more).
 */
function isFork(payload: Record<string, unknown>): boolean {
  const head = read.object(payload, 'pull_request.head.repo');
  const base = read.object(payload, 'pull_request.base.repo');
  if (head === null || base === null) return true;
  const headId = read.optionalNumber(head, 'id');
  const baseId = read.optionalNumber(base, 'id');
  if (headId !== null && baseId !== null) return headId !== baseId;
  const headName = read.optionalString(head, 'full_name');
  const baseName = read.optionalString(base, 'full_name');
  return headName === null || baseName === null || headName.toLowerCase() !== baseName.toLowerCase();
}

function pushOf(payload: Record<string, unknown>): VcsEvent {
  const ref = read.string(payload, 'ref');
  const before = read.string(payload, 'before');
  const after = read.string(payload, 'after');
  const deleted = read.boolean(payload, 'deleted') || after === ZERO_SHA;
  const commits = read.list(payload, 'commits');
  const head = read.object(payload, 'head_commit');
  return {
    kind: 'push',
    repository: read.string(payload, 'repository.full_name'),
    branch: ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null,
    ...(ref.startsWith('refs/tags/') ? { tag: ref.slice('refs/tags/'.length) } : {}),
    deleted,
    before_sha: before === ZERO_SHA ? null : before,
    // An annotated tag's `after` is the tag object; its head commit is the commit it tags.
    commit_sha: (ref.startsWith('refs/tags/') && !deleted && read.optionalString(head, 'id')) || after,
    commit_message: read.optionalString(head, 'message') ?? '',
    author:
      read.optionalString(head, 'author.name') ??
      read.optionalString(head, 'author.username') ??
      read.optionalString(head, 'author.email') ??
      read.optionalString(payload, 'pusher.name') ??
      read.optionalString(payload, 'sender.login') ??
      '',
    sender_id: idOf(read.optionalNumber(payload, 'sender.id')),
    changed_files: deleted ? [] : changedFilesOf(commits),
  };
}

/** The files of the listed commits, or null when the list may not be complete. */
function changedFilesOf(commits: unknown[]): string[] | null {
  // No commits (a rewind, a branch created at an existing commit) or a count where GitHub may cut.
  if (commits.length === 0 || commits.length >= COMMITS_MAYBE_CUT) return null;
  const paths: string[] = [];
  for (const commit of commits) {
    for (const key of ['added', 'modified', 'removed']) {
      const list = read.optionalList(commit, key);
      if (list === null || list.length >= PATHS_MAYBE_CUT) return null;
      for (const path of list) if (typeof path === 'string') paths.push(path);
    }
  }
  return uniquePaths(paths);
}
