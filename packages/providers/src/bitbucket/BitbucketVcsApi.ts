import type { CommitRelation, CommitState, CommitStatus, HookRequest, VcsApi, VcsArchive } from '@trellis/core';
import { isFullCommitSha, UnavailableError } from '@trellis/core';
import { baseUrlOf, collectPages, type JsonMethod, ProviderHttp, sameOriginNext } from '../providerHttp.js';
import {
  ARCHIVE_TIMEOUT_MS,
  ownerAndName,
  fullShaOf,
  permissionMissing,
  relationOf,
  shortKey,
  uniquePaths,
  type VcsAction,
  type VcsApiOptions,
} from '../vcs/common.js';

/**
 * Bitbucket Cloud documents no limit on a comment's body; Trellis keeps its comments under 32 KiB
 * characters, well inside what its pull request pages show.
 */
export const BITBUCKET_MAX_COMMENT_LENGTH = 32_768;
/** A build status's key is at most 40 characters. */
export const BITBUCKET_MAX_STATUS_KEY = 40;
const MAX_DIFFSTAT_ENTRIES = 100_000;

const GRANT =
  'the OAuth consumer needs the `webhook` scope (webhooks), `repository` (build statuses, diffstat) and `pullrequest` (comments), and the connecting user admin rights on the repository for webhooks; grant them and sign in again';

const STATES: Record<CommitState, string> = {
  pending: 'INPROGRESS',
  success: 'SUCCESSFUL',
  failure: 'FAILED',
  error: 'FAILED',
  neutral: 'STOPPED',
};

interface DiffStat {
  old?: { path?: string } | null;
  new?: { path?: string } | null;
}

/**
 * The Bitbucket Cloud REST API 2.0 as git-driven runs use it: repository webhooks, build
 * statuses, pull request comments and diffstat. With a base URL (test servers) the API is at
 * `<base>/api/2.0`, as for sign-in.
 */
export class BitbucketVcsApi implements VcsApi {
  readonly maxCommentLength = BITBUCKET_MAX_COMMENT_LENGTH;
  readonly apiBase: string;
  /** Where repositories are on the web: archives are served there (`/{workspace}/{slug}/get/{ref}.tar.gz`), not by the API. */
  readonly webBase: string;
  private readonly http: ProviderHttp;
  private readonly name: string;

  constructor(options: VcsApiOptions = {}) {
    this.apiBase = options.apiUrl
      ? baseUrlOf(options.apiUrl)
      : options.baseUrl
        ? `${baseUrlOf(options.baseUrl)}/api/2.0`
        : 'https://api.bitbucket.org/2.0';
    this.webBase = options.baseUrl
      ? baseUrlOf(options.baseUrl)
      : options.apiUrl
        ? new URL(baseUrlOf(options.apiUrl)).origin
        : 'https://bitbucket.org';
    this.name = options.displayName ?? 'Bitbucket';
    this.http = new ProviderHttp(this.name, options);
  }

  async createHook(token: string, repository: string, hook: HookRequest): Promise<{ hook_id: string }> {
    const { body } = await this.call<{ uuid?: string }>('POST', repository, '/hooks', token, 'create a webhook', {
      body: {
        description: 'Trellis',
        url: hook.url,
        active: true,
        secret: hook.secret,
        events: ['repo:push', 'pullrequest:created', 'pullrequest:updated'],
      },
    });
    if (typeof body?.uuid !== 'string' || body.uuid === '') {
      throw new UnavailableError('provider_unavailable', `${this.name} answered the new webhook without a uuid`);
    }
    return { hook_id: body.uuid };
  }

  async deleteHook(token: string, repository: string, hookId: string): Promise<void> {
    await this.call('DELETE', repository, `/hooks/${encodeURIComponent(hookId)}`, token, 'delete a webhook', {
      allow: [404],
    });
  }

  async setCommitStatus(token: string, repository: string, sha: string, status: CommitStatus): Promise<void> {
    await this.call(
      'POST',
      repository,
      `/commit/${encodeURIComponent(sha)}/statuses/build`,
      token,
      'set a commit status',
      {
        body: {
          key: shortKey(status.context, BITBUCKET_MAX_STATUS_KEY),
          name: status.context,
          state: STATES[status.state],
          description: status.description,
          url: status.target_url,
        },
      },
    );
  }

  async upsertPullRequestComment(
    token: string,
    repository: string,
    number: number,
    comment: { comment_id: string | null; body: string },
  ): Promise<{ comment_id: string }> {
    const comments = `/pullrequests/${number}/comments`;
    const content = { content: { raw: comment.body } };
    if (comment.comment_id !== null) {
      const edited = await this.call<{ id?: number }>(
        'PUT',
        repository,
        `${comments}/${encodeURIComponent(comment.comment_id)}`,
        token,
        'comment',
        { body: content, allow: [404] },
      );
      if (edited.status !== 404) return { comment_id: this.idOf(edited.body) };
    }
    const created = await this.call<{ id?: number }>('POST', repository, comments, token, 'comment', { body: content });
    return { comment_id: this.idOf(created.body) };
  }

  async resolveCommit(token: string, repository: string, sha: string): Promise<string> {
    if (isFullCommitSha(sha)) return sha;
    const { body } = await this.call<{ hash?: unknown }>(
      'GET',
      repository,
      `/commit/${encodeURIComponent(sha)}`,
      token,
      'compare',
    );
    return fullShaOf(this.name, body?.hash);
  }

  /** By the merge base API (`merge-base/<a>..<b>`). */
  async compareCommits(token: string, repository: string, baseSha: string, headSha: string): Promise<CommitRelation> {
    if (baseSha === headSha) return 'identical';
    const spec = `${encodeURIComponent(baseSha)}..${encodeURIComponent(headSha)}`;
    const { body } = await this.call<{ hash?: unknown }>('GET', repository, `/merge-base/${spec}`, token, 'compare');
    return relationOf(baseSha, headSha, fullShaOf(this.name, body?.hash));
  }

  async changedFiles(token: string, repository: string, baseSha: string, headSha: string): Promise<string[]> {
    const [workspace, slug] = ownerAndName(repository);
    const spec = `${encodeURIComponent(headSha)}..${encodeURIComponent(baseSha)}`;
    const first = `${this.apiBase}/repositories/${workspace}/${slug}/diffstat/${spec}?pagelen=500`;
    const entries = await collectPages(first, MAX_DIFFSTAT_ENTRIES, async (url) => {
      const { body } = await this.http.sendJson<{ values?: DiffStat[]; next?: string }>('GET', url, token, {
        denied: (status: number) => permissionMissing(this.name, repository, 'compare', status, GRANT),
      });
      if (!body || !Array.isArray(body.values)) {
        throw new UnavailableError('provider_unavailable', `${this.name} answered the diffstat without values`);
      }
      return { items: body.values, next: sameOriginNext(body.next, this.apiBase) };
    });
    return uniquePaths(entries.flatMap((entry) => [entry.new?.path, entry.old?.path]));
  }

  private idOf(body: { id?: number } | null): string {
    if (typeof body?.id !== 'number') {
      throw new UnavailableError('provider_unavailable', `${this.name} answered the comment without an id`);
    }
    return String(body.id);
  }

  /** `GET https://bitbucket.org/{workspace}/{slug}/get/{ref}.tar.gz` with the token. */
  async fetchArchive(token: string, repository: string, ref: string): Promise<VcsArchive> {
    const [workspace, slug] = ownerAndName(repository);
    const body = await this.http.getBinary(
      `${this.webBase}/${workspace}/${slug}/get/${encodeURIComponent(ref)}.tar.gz`,
      token,
      {
        denied: (status: number) => permissionMissing(this.name, repository, 'download an archive', status, GRANT),
        timeoutMs: ARCHIVE_TIMEOUT_MS,
      },
    );
    return { body, strip_components: 1 };
  }

  private call<T>(
    method: JsonMethod,
    repository: string,
    path: string,
    token: string,
    action: VcsAction,
    extra: { body?: unknown; allow?: number[] } = {},
  ) {
    const [workspace, slug] = ownerAndName(repository);
    return this.http.sendJson<T>(method, `${this.apiBase}/repositories/${workspace}/${slug}${path}`, token, {
      denied: (status: number) => permissionMissing(this.name, repository, action, status, GRANT),
      ...extra,
    });
  }
}
