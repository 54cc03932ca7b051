import {
  type CommitRelation,
  type CommitStatus,
  type HookRequest,
  isFullCommitSha,
  UnavailableError,
  type VcsApi,
  type VcsArchive,
} from '@trellis/core';
import { tarGz } from '../tarballs.js';

const DEFAULT_ARCHIVE = tarGz([{ path: 'repo-0000000/main.tf', content: 'terraform {}\n' }]);

export type VcsApiCall =
  | { method: 'createHook'; token: string; repository: string; hook: HookRequest }
  | { method: 'deleteHook'; token: string; repository: string; hook_id: string }
  | { method: 'setCommitStatus'; token: string; repository: string; sha: string; status: CommitStatus }
  | {
      method: 'upsertPullRequestComment';
      token: string;
      repository: string;
      number: number;
      comment_id: string | null;
      body: string;
    }
  | { method: 'changedFiles'; token: string; repository: string; base: string; head: string }
  | { method: 'resolveCommit'; token: string; repository: string; sha: string }
  | { method: 'compareCommits'; token: string; repository: string; base: string; head: string }
  | { method: 'fetchArchive'; token: string; repository: string; ref: string };

/**
 * A `VcsApi` that records every call and answers from what a test set: `fail[method]` makes that
 * method throw the error once per call while set, hooks get ids `hook-1`, `hook-2`, ...
 */
export class RecordingVcsApi implements VcsApi {
  readonly maxCommentLength = 65_536;
  readonly calls: VcsApiCall[] = [];
  readonly fail: Partial<Record<VcsApiCall['method'], Error>> = {};
  changed: string[] = [];
  /** What `resolveCommit` answers for a commit prefix (a full SHA is answered as it is). */
  commits: Record<string, string> = {};
  /** What `compareCommits` answers for `<base>...<head>` (default: `ahead`). */
  relations: Record<string, CommitRelation> = {};
  /**
   * What `fetchArchive` answers for `<repository>@<ref>` (a `.tar.gz` wrapped in one directory);
   * any other ref gets one empty `main.tf` (`fail.fetchArchive` makes it fail).
   */
  archives: Record<string, Uint8Array> = {};
  private serial = 0;

  private check(method: VcsApiCall['method']): void {
    const error = this.fail[method];
    if (error) throw error;
  }

  async createHook(token: string, repository: string, hook: HookRequest): Promise<{ hook_id: string }> {
    this.calls.push({ method: 'createHook', token, repository, hook: { ...hook } });
    this.check('createHook');
    this.serial += 1;
    return { hook_id: `hook-${this.serial}` };
  }

  async deleteHook(token: string, repository: string, hookId: string): Promise<void> {
    this.calls.push({ method: 'deleteHook', token, repository, hook_id: hookId });
    this.check('deleteHook');
  }

  async setCommitStatus(token: string, repository: string, sha: string, status: CommitStatus): Promise<void> {
    this.calls.push({ method: 'setCommitStatus', token, repository, sha, status: { ...status } });
    this.check('setCommitStatus');
  }

  async upsertPullRequestComment(
    token: string,
    repository: string,
    number: number,
    comment: { comment_id: string | null; body: string },
  ): Promise<{ comment_id: string }> {
    this.calls.push({ method: 'upsertPullRequestComment', token, repository, number, ...comment });
    this.check('upsertPullRequestComment');
    this.serial += 1;
    return { comment_id: comment.comment_id ?? `comment-${this.serial}` };
  }

  async resolveCommit(token: string, repository: string, sha: string): Promise<string> {
    if (isFullCommitSha(sha)) return sha;
    this.calls.push({ method: 'resolveCommit', token, repository, sha });
    this.check('resolveCommit');
    const full = this.commits[sha];
    if (full === undefined) throw new UnavailableError('provider_unavailable', `no commit ${sha} in ${repository}`);
    return full;
  }

  async compareCommits(token: string, repository: string, base: string, head: string): Promise<CommitRelation> {
    this.calls.push({ method: 'compareCommits', token, repository, base, head });
    this.check('compareCommits');
    if (base === head) return 'identical';
    return this.relations[`${base}...${head}`] ?? 'ahead';
  }

  async changedFiles(token: string, repository: string, base: string, head: string): Promise<string[]> {
    this.calls.push({ method: 'changedFiles', token, repository, base, head });
    this.check('changedFiles');
    return [...this.changed];
  }

  async fetchArchive(token: string, repository: string, ref: string): Promise<VcsArchive> {
    this.calls.push({ method: 'fetchArchive', token, repository, ref });
    this.check('fetchArchive');
    const bytes = this.archives[`${repository}@${ref}`] ?? DEFAULT_ARCHIVE;
    return {
      body: (async function* () {
        yield bytes;
      })(),
      strip_components: 1,
    };
  }
}
