import type {
  DeliverySignatureCheck,
  VcsDelivery,
  VcsEvent,
  VcsWebhookReader,
  WebhookRequestParts,
} from '@trellis/core';
import { ValidationError } from '@trellis/core';
import { headerOf, PayloadReader, payloadOf, tokenCheck, uniquePaths, ZERO_SHA, idOf } from '../vcs/common.js';

/** GitLab lists at most 20 commits of a push (`total_commits_count` says how many there were). */
const MAX_LISTED_COMMITS = 20;

const read = new PayloadReader('GitLab');

/**
 * Reads GitLab deliveries (`X-Gitlab-Event`, `X-Gitlab-Event-UUID`), whose `X-Gitlab-Token` must
 * equal the connection's secret.
 */
export class GitLabWebhookReader implements VcsWebhookReader {
  parse(request: WebhookRequestParts): VcsDelivery | null {
    const name = headerOf(request, 'x-gitlab-event');
    if (!name) return null;
    const deliveryId = headerOf(request, 'x-gitlab-event-uuid');
    if (!deliveryId) {
      throw new ValidationError('the GitLab delivery has no X-Gitlab-Event-UUID header', [
        { path: 'headers.x-gitlab-event-uuid', message: 'missing' },
      ]);
    }
    return { provider: 'gitlab', delivery_id: deliveryId, event: eventOf(name, request) };
  }

  signatureCheck(headers: WebhookRequestParts['headers'], secret: string): DeliverySignatureCheck {
    return tokenCheck(headerOf({ headers }, 'x-gitlab-token'), secret);
  }
}

function eventOf(name: string, request: WebhookRequestParts): VcsEvent {
  if (name === 'Push Hook' || name === 'Tag Push Hook') return pushOf(payloadOf(request, 'GitLab'));
  if (name === 'Merge Request Hook') return mergeRequestOf(payloadOf(request, 'GitLab'));
  return { kind: 'other', name };
}

function pushOf(payload: Record<string, unknown>): VcsEvent {
  const ref = read.string(payload, 'ref');
  const before = read.string(payload, 'before');
  const after = read.string(payload, 'after');
  const deleted = after === ZERO_SHA;
  const commits = read.list(payload, 'commits');
  // The head commit is the push's `after`; GitLab lists the commits oldest first.
  const head = commits.find((commit) => read.optionalString(commit, 'id') === after) ?? null;
  const total = read.optionalNumber(payload, 'total_commits_count') ?? commits.length;
  return {
    kind: 'push',
    repository: read.string(payload, 'project.path_with_namespace'),
    branch: ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null,
    ...(ref.startsWith('refs/tags/') ? { tag: ref.slice('refs/tags/'.length) } : {}),
    deleted,
    before_sha: before === ZERO_SHA ? null : before,
    // An annotated tag's `after` is the tag object; `checkout_sha` is the commit it tags.
    commit_sha: (ref.startsWith('refs/tags/') && !deleted && read.optionalString(payload, 'checkout_sha')) || after,
    commit_message: read.optionalString(head, 'message') ?? '',
    author:
      read.optionalString(head, 'author.name') ??
      read.optionalString(head, 'author.email') ??
      read.optionalString(payload, 'user_name') ??
      read.optionalString(payload, 'user_username') ??
      '',
    sender_id: idOf(read.optionalNumber(payload, 'user_id')),
    changed_files: deleted ? [] : changedFilesOf(commits, total),
  };
}

function changedFilesOf(commits: unknown[], total: number): string[] | null {
  if (commits.length === 0 || total > commits.length || commits.length > MAX_LISTED_COMMITS) return null;
  const paths: string[] = [];
  for (const commit of commits) {
    for (const key of ['added', 'modified', 'removed']) {
      const list = read.optionalList(commit, key);
      if (list === null) return null;
      for (const path of list) if (typeof path === 'string') paths.push(path);
    }
  }
  return uniquePaths(paths);
}

/**
 * `open` and `reopen` plan; an `update` plans only when it brought new commits (GitLab then sends
 * `oldrev`), not for a title, label or assignee change.
 */
function mergeRequestOf(payload: Record<string, unknown>): VcsEvent {
  const action = read.optionalString(payload, 'object_attributes.action');
  let kind: 'opened' | 'updated' | 'reopened' | null = null;
  if (action === 'open') kind = 'opened';
  else if (action === 'reopen') kind = 'reopened';
  else if (action === 'update' && read.optionalString(payload, 'object_attributes.oldrev') !== null) kind = 'updated';
  if (kind === null) return { kind: 'other', name: `Merge Request Hook.${action ?? 'unknown'}` };
  return {
    kind: 'pull_request',
    action: kind,
    repository: read.string(payload, 'project.path_with_namespace'),
    number: read.integer(payload, 'object_attributes.iid'),
    title: read.optionalString(payload, 'object_attributes.title') ?? '',
    url: read.string(payload, 'object_attributes.url'),
    head_sha: read.string(payload, 'object_attributes.last_commit.id'),
    head_branch: read.string(payload, 'object_attributes.source_branch'),
    base_branch: read.string(payload, 'object_attributes.target_branch'),
    author: read.optionalString(payload, 'user.username') ?? read.optionalString(payload, 'user.name') ?? '',
    fork: isFork(payload),
  };
}

/**
 * A merge request from another project (a fork): GitLab's `source_project_id` is not its
 * `target_project_id` (or, without ids, the two projects' paths differ). Unknown: a fork.
 */
function isFork(payload: Record<string, unknown>): boolean {
  const source = read.optionalNumber(payload, 'object_attributes.source_project_id');
  const target = read.optionalNumber(payload, 'object_attributes.target_project_id');
  if (source !== null && target !== null) return source !== target;
  const sourcePath = read.optionalString(payload, 'object_attributes.source.path_with_namespace');
  const targetPath = read.optionalString(payload, 'object_attributes.target.path_with_namespace');
  return sourcePath === null || targetPath === null || sourcePath.toLowerCase() !== targetPath.toLowerCase();
}
