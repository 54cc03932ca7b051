import type { CommitRelation, CommitStatus, HookRequest, VcsApi, VcsArchive } from '@trellis/core';
import { isFullCommitSha, UnavailableError } from '@trellis/core';
import { baseUrlOf, collectPages, ProviderHttp, sameOriginNext } from '../providerHttp.js';
import {
  ARCHIVE_TIMEOUT_MS,
  ownerAndName,
  fullShaOf,
  permissionMissing,
  truncateText,
  uniquePaths,
  type VcsAction,
  type VcsApiOptions,
} from '../vcs/common.js';
import { nextLink } from './GitHubProvider.js';

const GITHUB_HEADERS = { Accept: 'application/vnd.github+json', 'X-GitHub-Api-Version': '2022-11-28' };

/** GitHub's limit on an issue comment's body. */
export const GITHUB_MAX_COMMENT_LENGTH = 65_536;
/** A commit status's description is cut at 140 characters by GitHub. */
const MAX_DESCRIPTION = 140;
/** The compare API lists at most 300 files, on its first page only. */
const COMPARE_FILE_CAP = 300;
/** How far the per-commit fallback goes (commits of the comparison, files per commit). */
const MAX_COMMITS = 1_000;
const MAX_COMMIT_FILES = 3_000;

const GRANT =
  'the token needs the `repo` scope (or `admin:repo_hook` for webhooks) and, for webhooks, admin rights on the repository (write access for statuses and comments); grant them and sign in again';

interface GitHubFile {
  filename: string;
  previous_filename?: string;
}

/**
 * The GitHub (and GitHub Enterprise Server) REST API as git-driven runs use it: repository
 * webhooks, commit statuses, pull request comments (issue comments) and compare.
 */
export class GitHubVcsApi implements VcsApi {
  readonly maxCommentLength = GITHUB_MAX_COMMENT_LENGTH;
  readonly apiBase: string;
  private readonly http: ProviderHttp;
  private readonly name: string;

  constructor(options: VcsApiOptions = {}) {
    this.apiBase = options.apiUrl
      ? baseUrlOf(options.apiUrl)
      : options.baseUrl
        ? `${baseUrlOf(options.baseUrl)}/api/v3`
        : 'https://api.github.com';
    this.name = options.displayName ?? (options.baseUrl ? 'GitHub Enterprise' : 'GitHub');
    this.http = new ProviderHttp(this.name, options);
  }

  async createHook(token: string, repository: string, hook: HookRequest): Promise<{ hook_id: string }> {
    const { body } = await this.call<{ id?: number }>('POST', repository, '/hooks', token, 'create a webhook', {
      body: {
        name: 'web',
        active: true,
        events: ['push', 'pull_request'],
        config: { url: hook.url, content_type: 'json', secret: hook.secret, insecure_ssl: '0' },
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
    await this.call('POST', repository, `/statuses/${encodeURIComponent(sha)}`, token, 'set a commit status', {
      body: {
        // A status has no neutral state at GitHub: `error` says nothing was checked; the description says why.
        state: status.state === 'neutral' ? 'error' : status.state,
        context: status.context,
        description: truncateText(status.description, MAX_DESCRIPTION),
        target_url: status.target_url,
      },
    });
  }

  async upsertPullRequestComment(
    token: string,
    repository: string,
    number: number,
    comment: { comment_id: string | null; body: string },
  ): Promise<{ comment_id: string }> {
    if (comment.comment_id !== null) {
      const edited = await this.call<{ id?: number }>(
        'PATCH',
        repository,
        `/issues/comments/${encodeURIComponent(comment.comment_id)}`,
        token,
        'comment',
        { body: { body: comment.body }, allow: [404] },
      );
      if (edited.status !== 404) return { comment_id: this.idOf(edited.body) };
    }
    const created = await this.call<{ id?: number }>(
      'POST',
      repository,
      `/issues/${number}/comments`,
      token,
      'comment',
      {
        body: { body: comment.body },
      },
    );
    return { comment_id: this.idOf(created.body) };
  }

  async resolveCommit(token: string, repository: string, sha: string): Promise<string> {
    if (isFullCommitSha(sha)) return sha;
    const { body } = await this.call<{ sha?: unknown }>(
      'GET',
      repository,
      `/commits/${encodeURIComponent(sha)}`,
      token,
      'compare',
    );
    return fullShaOf(this.name, body?.sha);
  }

  async compareCommits(token: string, repository: string, baseSha: string, headSha: string): Promise<CommitRelation> {
    if (baseSha === headSha) return 'identical';
    const path = `/compare/${encodeURIComponent(baseSha)}...${encodeURIComponent(headSha)}?per_page=1`;
    const { body } = await this.call<{ status?: unknown }>('GET', repository, path, token, 'compare');
    const status = body?.status;
    if (status === 'ahead' || status === 'behind' || status === 'identical' || status === 'diverged') return status;
    throw new UnavailableError('provider_unavailable', `${this.name} answered the comparison without its status`);
  }

  async changedFiles(token: string, repository: string, baseSha: string, headSha: string): Promise<string[]> {
    const path = `/compare/${encodeURIComponent(baseSha)}...${encodeURIComponent(headSha)}`;
    const { body } = await this.call<{ files?: GitHubFile[] }>(
      'GET',
      repository,
      `${path}?per_page=100`,
      token,
      'compare',
    );
    const files = Array.isArray(body?.files) ? body.files : [];
    if (files.length < COMPARE_FILE_CAP) return namesOf(files);
    // At the cap the list may be cut: read the files of each commit of the comparison instead.
    const [owner, name] = ownerAndName(repository);
    const repo = `${this.apiBase}/repos/${owner}/${name}`;
    const commits = await collectPages(`${repo}${path}?per_page=100`, MAX_COMMITS, async (url) => {
      const page = await this.http.sendJson<{ commits?: { sha: string }[] }>(
        'GET',
        url,
        token,
        this.options(repository, 'compare'),
      );
      return {
        items: (page.body?.commits ?? []).map((commit) => commit.sha),
        next: sameOriginNext(nextLink(page.headers.get('link')), this.apiBase),
      };
    });
    const all: GitHubFile[] = [...files];
    for (const sha of commits) {
      all.push(
        ...(await collectPages(
          `${repo}/commits/${encodeURIComponent(sha)}?per_page=300`,
          MAX_COMMIT_FILES,
          async (url) => {
            const page = await this.http.sendJson<{ files?: GitHubFile[] }>(
              'GET',
              url,
              token,
              this.options(repository, 'compare'),
            );
            return {
              items: page.body?.files ?? [],
              next: sameOriginNext(nextLink(page.headers.get('link')), this.apiBase),
            };
          },
        )),
      );
    }
    return namesOf(all);
  }

  /** `GET /repos/{owner}/{repo}/tarball/{ref}`: a 302 to codeload, followed without the token. */
  async fetchArchive(token: string, repository: string, ref: string): Promise<VcsArchive> {
    const [owner, name] = ownerAndName(repository);
    const body = await this.http.getBinary(
      `${this.apiBase}/repos/${owner}/${name}/tarball/${encodeURIComponent(ref)}`,
      token,
      { ...this.options(repository, 'download an archive'), timeoutMs: ARCHIVE_TIMEOUT_MS },
    );
    return { body, strip_components: 1 };
  }

  private idOf(body: { id?: number } | null): string {
    if (typeof body?.id !== 'number') {
      throw new UnavailableError('provider_unavailable', `${this.name} answered the comment without an id`);
    }
    return String(body.id);
  }

  private options(repository: string, action: VcsAction) {
    return {
      headers: GITHUB_HEADERS,
      denied: (status: number) => permissionMissing(this.name, repository, action, status, GRANT),
    };
  }

  private call<T>(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    repository: string,
    path: string,
    token: string,
    action: VcsAction,
    extra: { body?: unknown; allow?: number[] } = {},
  ) {
    const [owner, name] = ownerAndName(repository);
    return this.http.sendJson<T>(method, `${this.apiBase}/repos/${owner}/${name}${path}`, token, {
      ...this.options(repository, action),
      ...extra,
    });
  }
}

function namesOf(files: GitHubFile[]): string[] {
  return uniquePaths(files.flatMap((file) => [file.filename, file.previous_filename]));
}
