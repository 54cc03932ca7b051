import type { CommitRelation, CommitState, CommitStatus, HookRequest, VcsApi, VcsArchive } from '@trellis/core';
import { isFullCommitSha, UnavailableError } from '@trellis/core';
import { baseUrlOf, type JsonMethod, ProviderHttp } from '../providerHttp.js';
import {
  ARCHIVE_TIMEOUT_MS,
  fullShaOf,
  permissionMissing,
  relationOf,
  truncateText,
  uniquePaths,
  type VcsAction,
  type VcsApiOptions,
} from '../vcs/common.js';

/** GitLab's limit on a note (comment) body. */
export const GITLAB_MAX_COMMENT_LENGTH = 1_000_000;
const MAX_DESCRIPTION = 255;

const GRANT =
  'the token needs the `api` scope and the Maintainer role on the project (Developer is enough for statuses and comments); grant them and sign in again';

const STATES: Record<CommitState, string> = {
  pending: 'pending',
  success: 'success',
  failure: 'failed',
  error: 'failed',
  neutral: 'skipped',
};

interface GitLabDiff {
  old_path?: string;
  new_path?: string;
}

/**
 * The GitLab REST API (gitlab.com or self-managed) as git-driven runs use it: project hooks,
 * commit statuses, merge request notes and compare. A project is named by its full path, URL-encoded.
 */
export class GitLabVcsApi implements VcsApi {
  readonly maxCommentLength = GITLAB_MAX_COMMENT_LENGTH;
  readonly apiBase: string;
  private readonly http: ProviderHttp;
  private readonly name: string;

  constructor(options: VcsApiOptions = {}) {
    this.apiBase = options.apiUrl
      ? baseUrlOf(options.apiUrl)
      : `${baseUrlOf(options.baseUrl || 'https://gitlab.com')}/api/v4`;
    this.name = options.displayName ?? 'GitLab';
    this.http = new ProviderHttp(this.name, options);
  }

  async createHook(token: string, repository: string, hook: HookRequest): Promise<{ hook_id: string }> {
    const { body } = await this.call<{ id?: number }>('POST', repository, '/hooks', token, 'create a webhook', {
      body: {
        url: hook.url,
        token: hook.secret,
        push_events: true,
        merge_requests_events: true,
        tag_push_events: hook.tag_pushes === true,
        enable_ssl_verification: true,
      },
    });
    if (typeof body?.id !== 'number') {
      throw new UnavailableError('provider_unavailable', `${this.name} answered the new webhook without an id`);
    }
    return { hook_id: String(body.id) };
  }

  async deleteHook(token: string, repository: string, hookId: string): Promise<void> {
    await this.call('DELETE', repository, `/hooks/${encodeURIComponent(hookId)}`, token, 'delete a webhook', {
      allow: [404],
    });
  }

  async setCommitStatus(token: string, repository: string, sha: string, status: CommitStatus): Promise<void> {
    const answer = await this.call<{ message?: unknown }>(
      'POST',
      repository,
      `/statuses/${encodeURIComponent(sha)}`,
      token,
      'set a commit status',
      {
        body: {
          state: STATES[status.state],
          name: status.context,
          description: truncateText(status.description, MAX_DESCRIPTION),
          target_url: status.target_url,
        },
        allow: [400],
      },
    );
    // GitLab refuses to set a status to the state it already has ("Cannot transition status via
    // :enqueue from :pending"): the status already says what we wanted.
    if (answer.status === 400 && !/cannot transition status/i.test(JSON.stringify(answer.body?.message ?? ''))) {
      throw new UnavailableError('provider_unavailable', `${this.name} answered 400 for the commit status`);
    }
  }

  async upsertPullRequestComment(
    token: string,
    repository: string,
    number: number,
    comment: { comment_id: string | null; body: string },
  ): Promise<{ comment_id: string }> {
    const notes = `/merge_requests/${number}/notes`;
    if (comment.comment_id !== null) {
      const edited = await this.call<{ id?: number }>(
        'PUT',
        repository,
        `${notes}/${encodeURIComponent(comment.comment_id)}`,
        token,
        'comment',
        { body: { body: comment.body }, allow: [404] },
      );
      if (edited.status !== 404) return { comment_id: this.idOf(edited.body) };
    }
    const created = await this.call<{ id?: number }>('POST', repository, notes, token, 'comment', {
      body: { body: comment.body },
    });
    return { comment_id: this.idOf(created.body) };
  }

  async resolveCommit(token: string, repository: string, sha: string): Promise<string> {
    if (isFullCommitSha(sha)) return sha;
    const { body } = await this.call<{ id?: unknown }>(
      'GET',
      repository,
      `/repository/commits/${encodeURIComponent(sha)}`,
      token,
      'compare',
    );
    return fullShaOf(this.name, body?.id);
  }

  /** By the merge base API; GitLab answers 400 when the two commits share no history. */
  async compareCommits(token: string, repository: string, baseSha: string, headSha: string): Promise<CommitRelation> {
    if (baseSha === headSha) return 'identical';
    const query = `refs[]=${encodeURIComponent(baseSha)}&refs[]=${encodeURIComponent(headSha)}`;
    const answer = await this.call<{ id?: unknown }>(
      'GET',
      repository,
      `/repository/merge_base?${query}`,
      token,
      'compare',
      { allow: [400] },
    );
    if (answer.status === 400) return 'diverged';
    return relationOf(baseSha, headSha, fullShaOf(this.name, answer.body?.id));
  }

  async changedFiles(token: string, repository: string, baseSha: string, headSha: string): Promise<string[]> {
    const query = new URLSearchParams({ from: baseSha, to: headSha }).toString();
    const { body } = await this.call<{ diffs?: GitLabDiff[]; compare_timeout?: boolean }>(
      'GET',
      repository,
      `/repository/compare?${query}`,
      token,
      'compare',
    );
    if (body?.compare_timeout === true) {
      throw new UnavailableError('provider_unavailable', `${this.name} timed out comparing the two commits`);
    }
    const diffs = Array.isArray(body?.diffs) ? body.diffs : [];
    return uniquePaths(diffs.flatMap((diff) => [diff.new_path, diff.old_path]));
  }

  /** `GET /projects/:id/repository/archive.tar.gz?sha=ref`. */
  async fetchArchive(token: string, repository: string, ref: string): Promise<VcsArchive> {
    const url = `${this.apiBase}/projects/${encodeURIComponent(repository)}/repository/archive.tar.gz?sha=${encodeURIComponent(ref)}`;
    const body = await this.http.getBinary(url, token, {
      denied: (status: number) => permissionMissing(this.name, repository, 'download an archive', status, GRANT),
      timeoutMs: ARCHIVE_TIMEOUT_MS,
    });
    return { body, strip_components: 1 };
  }

  private idOf(body: { id?: number } | null): string {
    if (typeof body?.id !== 'number') {
      throw new UnavailableError('provider_unavailable', `${this.name} answered the note without an id`);
    }
    return String(body.id);
  }

  private call<T>(
    method: JsonMethod,
    repository: string,
    path: string,
    token: string,
    action: VcsAction,
    extra: { body?: unknown; allow?: number[] } = {},
  ) {
    const url = `${this.apiBase}/projects/${encodeURIComponent(repository)}${path}`;
    return this.http.sendJson<T>(method, url, token, {
      denied: (status: number) => permissionMissing(this.name, repository, action, status, GRANT),
      ...extra,
    });
  }
}
