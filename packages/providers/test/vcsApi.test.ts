import { ConflictError, RateLimitedError, UnauthorizedError, UnavailableError, type VcsApi } from '@trellis/core';
import { BitbucketVcsApi, GitHubVcsApi, GitLabVcsApi } from '@trellis/providers';
import nock from 'nock';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

const TOKEN = 'gho_vcs_7d1e0c44b2a9f3e5';
const HOOK = { url: 'https://trellis.acme.example/api/webhooks/github', secret: 'whsec-9a8b7c6d5e4f' };
const HEAD = '8457785ada4ab6182c16fbac60586081edf51999';
const BASE = '7e2bbeac059d724b1d148ee6bc26b107289f35c3';
const STATUS = {
  state: 'success' as const,
  context: 'trellis/prod/network',
  description: 'Plan: 1 to add, 2 to change, 0 to destroy',
  target_url: 'https://trellis.acme.example/jobs/5f0b2c1e',
};

beforeAll(() => {
  nock.disableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
});

const auth = { reqheaders: { authorization: `Bearer ${TOKEN}` } };

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('GitHub git API', () => {
  const REPO = '/repos/acme-platform/infra-live';
  const github = () => new GitHubVcsApi();
  const api = () =>
    nock('https://api.github.com', {
      reqheaders: {
        authorization: `Bearer ${TOKEN}`,
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
      },
    });

  it('creates a JSON webhook for push and pull_request events with the secret', async () => {
    const scope = api()
      .matchHeader('content-type', 'application/json')
      .post(`${REPO}/hooks`, {
        name: 'web',
        active: true,
        events: ['push', 'pull_request'],
        config: { url: HOOK.url, content_type: 'json', secret: HOOK.secret, insecure_ssl: '0' },
      })
      .reply(201, { id: 482730115, type: 'Repository', name: 'web', active: true });
    expect(await github().createHook(TOKEN, 'acme-platform/infra-live', HOOK)).toEqual({ hook_id: '482730115' });
    expect(scope.isDone()).toBe(true);
  });

  it('calls /api/v3 of a GitHub Enterprise Server', async () => {
    const scope = nock('https://ghe.acme.example', auth)
      .delete('/api/v3/repos/acme-platform/infra-live/hooks/12')
      .reply(204);
    await new GitHubVcsApi({ baseUrl: 'https://ghe.acme.example/' }).deleteHook(
      TOKEN,
      'acme-platform/infra-live',
      '12',
    );
    expect(scope.isDone()).toBe(true);
  });

  it('deletes a hook, and takes a hook already gone (404) as deleted', async () => {
    api()
      .delete(`${REPO}/hooks/482730115`)
      .reply(204)
      .delete(`${REPO}/hooks/482730116`)
      .reply(404, { message: 'Not Found' });
    await github().deleteHook(TOKEN, 'acme-platform/infra-live', '482730115');
    await github().deleteHook(TOKEN, 'acme-platform/infra-live', '482730116');
    expect(nock.isDone()).toBe(true);
  });

  it('sets a commit status, its description cut to 140 characters', async () => {
    const long = 'x'.repeat(200);
    api()
      .post(`${REPO}/statuses/${HEAD}`, {
        state: 'failure',
        context: 'trellis/prod/network',
        description: `${'x'.repeat(139)}…`,
        target_url: STATUS.target_url,
      })
      .reply(201, { id: 1, state: 'failure' });
    await github().setCommitStatus(TOKEN, 'acme-platform/infra-live', HEAD, {
      ...STATUS,
      state: 'failure',
      description: long,
    });
    expect(nock.isDone()).toBe(true);
  });

  it('creates a pull request comment, edits it in place, and recreates it when it was deleted', async () => {
    api()
      .post(`${REPO}/issues/42/comments`, { body: 'plan 1' })
      .reply(201, { id: 1001 })
      .patch(`${REPO}/issues/comments/1001`, { body: 'plan 2' })
      .reply(200, { id: 1001 })
      .patch(`${REPO}/issues/comments/1001`, { body: 'plan 3' })
      .reply(404, { message: 'Not Found' })
      .post(`${REPO}/issues/42/comments`, { body: 'plan 3' })
      .reply(201, { id: 1002 });
    const gh = github();
    expect(gh.maxCommentLength).toBe(65_536);
    const repo = 'acme-platform/infra-live';
    expect(await gh.upsertPullRequestComment(TOKEN, repo, 42, { comment_id: null, body: 'plan 1' })).toEqual({
      comment_id: '1001',
    });
    expect(await gh.upsertPullRequestComment(TOKEN, repo, 42, { comment_id: '1001', body: 'plan 2' })).toEqual({
      comment_id: '1001',
    });
    expect(await gh.upsertPullRequestComment(TOKEN, repo, 42, { comment_id: '1001', body: 'plan 3' })).toEqual({
      comment_id: '1002',
    });
    expect(nock.isDone()).toBe(true);
  });

  it('lists the files of a comparison, with the old name of a renamed file', async () => {
    api()
      .get(`${REPO}/compare/${BASE}...${HEAD}?per_page=100`)
      .reply(200, {
        status: 'ahead',
        total_commits: 2,
        commits: [{ sha: BASE }, { sha: HEAD }],
        files: [
          { filename: 'infra/dns/status.tf', status: 'added' },
          { filename: 'infra/network/vpc.tf', previous_filename: 'infra/network/main.tf', status: 'renamed' },
          { filename: 'infra/dns/status.tf', status: 'modified' },
        ],
      });
    expect(await github().changedFiles(TOKEN, 'acme-platform/infra-live', BASE, HEAD)).toEqual([
      'infra/dns/status.tf',
      'infra/network/vpc.tf',
      'infra/network/main.tf',
    ]);
  });

  it("reads each commit's files, page by page, when the comparison reaches GitHub's 300-file cap", async () => {
    const capped = Array.from({ length: 300 }, (_, i) => ({ filename: `modules/m${i}/main.tf` }));
    const compare = `${REPO}/compare/${BASE}...${HEAD}?per_page=100`;
    const page2 = `https://api.github.com${REPO}/compare/${BASE}...${HEAD}?per_page=100&page=2`;
    api()
      .get(compare)
      .reply(200, { commits: [{ sha: 'c1' }], files: capped })
      .get(compare)
      .reply(200, { commits: [{ sha: 'c1' }], files: capped }, { Link: `<${page2}>; rel="next"` })
      .get(`${REPO}/compare/${BASE}...${HEAD}?per_page=100&page=2`)
      .reply(200, { commits: [{ sha: 'c2' }] })
      .get(`${REPO}/commits/c1?per_page=300`)
      .reply(200, { sha: 'c1', files: [{ filename: 'modules/m0/main.tf' }] })
      .get(`${REPO}/commits/c2?per_page=300`)
      .reply(
        200,
        { sha: 'c2', files: [{ filename: 'infra/a.tf' }] },
        {
          Link: `<https://api.github.com${REPO}/commits/c2?per_page=300&page=2>; rel="next"`,
        },
      )
      .get(`${REPO}/commits/c2?per_page=300&page=2`)
      .reply(200, { sha: 'c2', files: [{ filename: 'infra/z.tf', previous_filename: 'infra/y.tf' }] });
    const files = await github().changedFiles(TOKEN, 'acme-platform/infra-live', BASE, HEAD);
    expect(files).toHaveLength(303);
    expect(files.slice(-3)).toEqual(['infra/a.tf', 'infra/z.tf', 'infra/y.tf']);
    expect(nock.isDone()).toBe(true);
  });

  it('says what to grant when GitHub refuses a webhook (403) or hides the repository (404)', async () => {
    api().post(`${REPO}/hooks`).reply(403, { message: 'Resource not accessible by integration' });
    const error = await failure(github().createHook(TOKEN, 'acme-platform/infra-live', HOOK));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: 'vcs_permission_missing' });
    expect((error as Error).message).toMatch(/`repo` scope.*`admin:repo_hook`.*admin rights.*manual webhook/);
    expect((error as Error).message).not.toContain(TOKEN);
    expect((error as Error).message).not.toContain(HOOK.secret);
  });

  it("reads GitHub's 403 with x-ratelimit-remaining 0 or Retry-After as rate limiting", async () => {
    api()
      .post(`${REPO}/statuses/${HEAD}`)
      .reply(403, { message: 'API rate limit exceeded' }, { 'x-ratelimit-remaining': '0', 'retry-after': '30' });
    await expect(github().setCommitStatus(TOKEN, 'acme-platform/infra-live', HEAD, STATUS)).rejects.toMatchObject({
      code: 'rate_limited',
      retryAfterSeconds: 30,
    });
    api()
      .post(`${REPO}/statuses/${HEAD}`)
      .reply(403, { message: 'You have exceeded a secondary rate limit' }, { 'retry-after': '61' });
    await expect(github().setCommitStatus(TOKEN, 'acme-platform/infra-live', HEAD, STATUS)).rejects.toMatchObject({
      code: 'rate_limited',
      retryAfterSeconds: 61,
    });
  });
});

describe('GitLab git API', () => {
  const PROJECT = '/api/v4/projects/acme%2Fplatform%2Finfra-live';
  const REPO = 'acme/platform/infra-live';
  const gitlab = () => new GitLabVcsApi();
  const api = (host = 'https://gitlab.com') => nock(host, auth);

  it('creates a project hook for push and merge request events with the secret as token', async () => {
    api()
      .matchHeader('content-type', 'application/json')
      .post(`${PROJECT}/hooks`, {
        url: HOOK.url,
        token: HOOK.secret,
        push_events: true,
        merge_requests_events: true,
        tag_push_events: false,
        enable_ssl_verification: true,
      })
      .reply(201, { id: 7731, url: HOOK.url, push_events: true });
    expect(await gitlab().createHook(TOKEN, REPO, HOOK)).toEqual({ hook_id: '7731' });
    expect(nock.isDone()).toBe(true);
  });

  it("subscribes a registry module's hook to tag pushes", async () => {
    api()
      .post(`${PROJECT}/hooks`, (body) => body.tag_push_events === true && body.push_events === true)
      .reply(201, { id: 7740 });
    expect(await gitlab().createHook(TOKEN, REPO, { ...HOOK, tag_pushes: true })).toEqual({ hook_id: '7740' });
    expect(nock.isDone()).toBe(true);
  });

  it('calls /api/v4 of a self-managed GitLab and takes a hook already gone as deleted', async () => {
    api('https://git.acme.example')
      .delete(`${PROJECT}/hooks/7731`)
      .reply(204)
      .delete(`${PROJECT}/hooks/7732`)
      .reply(404, { message: '404 Not found' });
    const selfManaged = new GitLabVcsApi({ baseUrl: 'https://git.acme.example' });
    await selfManaged.deleteHook(TOKEN, REPO, '7731');
    await selfManaged.deleteHook(TOKEN, REPO, '7732');
    expect(nock.isDone()).toBe(true);
  });

  it("sets a commit status in GitLab's words; a status already in that state is not an error", async () => {
    api()
      .post(`${PROJECT}/statuses/${HEAD}`, {
        state: 'failed',
        name: 'trellis/prod/network',
        description: STATUS.description,
        target_url: STATUS.target_url,
      })
      .reply(201, { id: 1, status: 'failed' })
      .post(`${PROJECT}/statuses/${HEAD}`, (body) => body.state === 'pending')
      .reply(400, { message: 'Cannot transition status via :enqueue from :pending (Reasons: )' })
      .post(`${PROJECT}/statuses/${HEAD}`, (body) => body.state === 'success')
      .reply(400, { message: { state: ['is invalid'] } });
    await gitlab().setCommitStatus(TOKEN, REPO, HEAD, { ...STATUS, state: 'error' });
    await gitlab().setCommitStatus(TOKEN, REPO, HEAD, { ...STATUS, state: 'pending' });
    await expect(gitlab().setCommitStatus(TOKEN, REPO, HEAD, STATUS)).rejects.toMatchObject({
      code: 'provider_unavailable',
    });
    expect(nock.isDone()).toBe(true);
  });

  it('writes merge request notes: create, edit in place, recreate when deleted', async () => {
    api()
      .post(`${PROJECT}/merge_requests/17/notes`, { body: 'plan 1' })
      .reply(201, { id: 1822093311 })
      .put(`${PROJECT}/merge_requests/17/notes/1822093311`, { body: 'plan 2' })
      .reply(200, { id: 1822093311 })
      .put(`${PROJECT}/merge_requests/17/notes/1822093311`, { body: 'plan 3' })
      .reply(404, { message: '404 Not found' })
      .post(`${PROJECT}/merge_requests/17/notes`, { body: 'plan 3' })
      .reply(201, { id: 1822093400 });
    const gl = gitlab();
    expect(gl.maxCommentLength).toBe(1_000_000);
    expect(await gl.upsertPullRequestComment(TOKEN, REPO, 17, { comment_id: null, body: 'plan 1' })).toEqual({
      comment_id: '1822093311',
    });
    expect(await gl.upsertPullRequestComment(TOKEN, REPO, 17, { comment_id: '1822093311', body: 'plan 2' })).toEqual({
      comment_id: '1822093311',
    });
    expect(await gl.upsertPullRequestComment(TOKEN, REPO, 17, { comment_id: '1822093311', body: 'plan 3' })).toEqual({
      comment_id: '1822093400',
    });
    expect(nock.isDone()).toBe(true);
  });

  it('lists the files of a comparison (new and old paths); refuses a comparison that timed out', async () => {
    api()
      .get(`${PROJECT}/repository/compare`)
      .query({ from: BASE, to: HEAD })
      .reply(200, {
        commit: { id: HEAD },
        commits: [],
        diffs: [
          { old_path: 'infra/iam/deploy.tf', new_path: 'infra/iam/deploy.tf', deleted_file: true },
          { old_path: 'infra/a.tf', new_path: 'infra/b.tf', renamed_file: true },
        ],
        compare_timeout: false,
        compare_same_ref: false,
      })
      .get(`${PROJECT}/repository/compare`)
      .query({ from: BASE, to: HEAD })
      .reply(200, { diffs: [], compare_timeout: true });
    expect(await gitlab().changedFiles(TOKEN, REPO, BASE, HEAD)).toEqual([
      'infra/iam/deploy.tf',
      'infra/b.tf',
      'infra/a.tf',
    ]);
    await expect(gitlab().changedFiles(TOKEN, REPO, BASE, HEAD)).rejects.toBeInstanceOf(UnavailableError);
  });

  it('says to grant the api scope and the Maintainer role', async () => {
    api().post(`${PROJECT}/hooks`).reply(403, { message: '403 Forbidden' });
    const error = await failure(gitlab().createHook(TOKEN, REPO, HOOK));
    expect(error).toMatchObject({ code: 'vcs_permission_missing' });
    expect((error as Error).message).toMatch(/`api` scope.*Maintainer.*manual webhook/);
  });
});

describe('Bitbucket git API', () => {
  const REPO_PATH = '/2.0/repositories/acme-ops/infra-live';
  const REPO = 'acme-ops/infra-live';
  const bitbucket = () => new BitbucketVcsApi();
  const api = () => nock('https://api.bitbucket.org', auth);

  it('creates a webhook for repo:push and pull request created/updated with the secret', async () => {
    api()
      .post(`${REPO_PATH}/hooks`, {
        description: 'Trellis',
        url: HOOK.url,
        active: true,
        secret: HOOK.secret,
        events: ['repo:push', 'pullrequest:created', 'pullrequest:updated'],
      })
      .reply(201, { uuid: '{4c1d7e2a-0b9f-4e3d-8a6c-5b2e1f0d9c8a}', active: true });
    expect(await bitbucket().createHook(TOKEN, REPO, HOOK)).toEqual({
      hook_id: '{4c1d7e2a-0b9f-4e3d-8a6c-5b2e1f0d9c8a}',
    });
  });

  it('deletes a hook by its encoded uuid, a hook already gone included; uses <base>/api/2.0 with a base URL', async () => {
    api()
      .delete(`${REPO_PATH}/hooks/%7B4c1d7e2a-0b9f-4e3d-8a6c-5b2e1f0d9c8a%7D`)
      .reply(204)
      .delete(`${REPO_PATH}/hooks/%7Bgone%7D`)
      .reply(404, { type: 'error', error: { message: 'Not found' } });
    await bitbucket().deleteHook(TOKEN, REPO, '{4c1d7e2a-0b9f-4e3d-8a6c-5b2e1f0d9c8a}');
    await bitbucket().deleteHook(TOKEN, REPO, '{gone}');
    nock('http://127.0.0.1:7990', auth).delete('/api/2.0/repositories/acme-ops/infra-live/hooks/h1').reply(204);
    await new BitbucketVcsApi({ baseUrl: 'http://127.0.0.1:7990' }).deleteHook(TOKEN, REPO, 'h1');
    expect(nock.isDone()).toBe(true);
  });

  it('sets a build status keyed by the context, a long context cut to 40 characters with a hash', async () => {
    api()
      .post(`${REPO_PATH}/commit/${HEAD}/statuses/build`, {
        key: 'trellis/prod/network',
        name: 'trellis/prod/network',
        state: 'INPROGRESS',
        description: STATUS.description,
        url: STATUS.target_url,
      })
      .reply(201, {})
      .post(`${REPO_PATH}/commit/${HEAD}/statuses/build`, (body) => {
        keys.push(body.key);
        return body.state === 'SUCCESSFUL' && body.name.startsWith('trellis/production-eu-west-');
      })
      .times(2)
      .reply(201, {});
    const keys: string[] = [];
    await bitbucket().setCommitStatus(TOKEN, REPO, HEAD, { ...STATUS, state: 'pending' });
    const long = 'trellis/production-eu-west-1/networking-core-';
    await bitbucket().setCommitStatus(TOKEN, REPO, HEAD, { ...STATUS, context: `${long}a` });
    await bitbucket().setCommitStatus(TOKEN, REPO, HEAD, { ...STATUS, context: `${long}b` });
    expect(keys.map((key) => key.length)).toEqual([40, 40]);
    expect(keys[0]).toMatch(/^trellis\/production-eu-west-1\/ne-[0-9a-f]{8}$/);
    expect(keys[0]).not.toBe(keys[1]);
    expect(nock.isDone()).toBe(true);
  });

  it('writes pull request comments: create, edit in place, recreate when deleted', async () => {
    api()
      .post(`${REPO_PATH}/pullrequests/9/comments`, { content: { raw: 'plan 1' } })
      .reply(201, { id: 512001 })
      .put(`${REPO_PATH}/pullrequests/9/comments/512001`, { content: { raw: 'plan 2' } })
      .reply(200, { id: 512001 })
      .put(`${REPO_PATH}/pullrequests/9/comments/512001`, { content: { raw: 'plan 3' } })
      .reply(404, { type: 'error', error: { message: 'No such comment' } })
      .post(`${REPO_PATH}/pullrequests/9/comments`, { content: { raw: 'plan 3' } })
      .reply(201, { id: 512002 });
    const bb = bitbucket();
    expect(await bb.upsertPullRequestComment(TOKEN, REPO, 9, { comment_id: null, body: 'plan 1' })).toEqual({
      comment_id: '512001',
    });
    expect(await bb.upsertPullRequestComment(TOKEN, REPO, 9, { comment_id: '512001', body: 'plan 2' })).toEqual({
      comment_id: '512001',
    });
    expect(await bb.upsertPullRequestComment(TOKEN, REPO, 9, { comment_id: '512001', body: 'plan 3' })).toEqual({
      comment_id: '512002',
    });
    expect(nock.isDone()).toBe(true);
  });

  it('follows the diffstat pages (never to another origin)', async () => {
    const first = `${REPO_PATH}/diffstat/${HEAD}..${BASE}?pagelen=500`;
    api()
      .get(first)
      .reply(200, {
        values: [
          { status: 'modified', old: { path: 'queues/dlq.tf' }, new: { path: 'queues/dlq.tf' } },
          { status: 'added', old: null, new: { path: 'queues/alarms.tf' } },
        ],
        next: `https://api.bitbucket.org${REPO_PATH}/diffstat/${HEAD}..${BASE}?pagelen=500&page=2`,
      })
      .get(`${REPO_PATH}/diffstat/${HEAD}..${BASE}?pagelen=500&page=2`)
      .reply(200, {
        values: [{ status: 'removed', old: { path: 'queues/legacy.tf' }, new: null }],
        next: 'https://evil.example/steal?page=3',
      });
    expect(await bitbucket().changedFiles(TOKEN, REPO, BASE, HEAD)).toEqual([
      'queues/dlq.tf',
      'queues/alarms.tf',
      'queues/legacy.tf',
    ]);
    expect(nock.isDone()).toBe(true);
  });

  it('says to grant the webhook, repository and pullrequest scopes', async () => {
    api()
      .post(`${REPO_PATH}/hooks`)
      .reply(403, { type: 'error', error: { message: 'Forbidden' } });
    const error = await failure(bitbucket().createHook(TOKEN, REPO, HOOK));
    expect(error).toMatchObject({ code: 'vcs_permission_missing' });
    expect((error as Error).message).toMatch(/`webhook`.*`repository`.*`pullrequest`.*admin.*manual webhook/);
  });
});

/** Every method of every adapter translates every provider failure the same way. */
interface Call {
  method: string;
  path: string;
  run: (api: VcsApi) => Promise<unknown>;
}

const GH = '/repos/acme-platform/infra-live';
const GL = '/api/v4/projects/acme%2Fplatform%2Finfra-live';
const BB = '/2.0/repositories/acme-ops/infra-live';
const ADAPTERS: { name: string; host: string; api: () => VcsApi; repo: string; calls: Call[] }[] = [
  {
    name: 'GitHub',
    host: 'https://api.github.com',
    api: () => new GitHubVcsApi(),
    repo: 'acme-platform/infra-live',
    calls: [
      { method: 'POST', path: `${GH}/hooks`, run: (a) => a.createHook(TOKEN, 'acme-platform/infra-live', HOOK) },
      { method: 'DELETE', path: `${GH}/hooks/5`, run: (a) => a.deleteHook(TOKEN, 'acme-platform/infra-live', '5') },
      {
        method: 'POST',
        path: `${GH}/statuses/${HEAD}`,
        run: (a) => a.setCommitStatus(TOKEN, 'acme-platform/infra-live', HEAD, STATUS),
      },
      {
        method: 'POST',
        path: `${GH}/issues/42/comments`,
        run: (a) => a.upsertPullRequestComment(TOKEN, 'acme-platform/infra-live', 42, { comment_id: null, body: 'b' }),
      },
      {
        method: 'PATCH',
        path: `${GH}/issues/comments/7`,
        run: (a) => a.upsertPullRequestComment(TOKEN, 'acme-platform/infra-live', 42, { comment_id: '7', body: 'b' }),
      },
      {
        method: 'GET',
        path: `${GH}/compare/${BASE}...${HEAD}?per_page=100`,
        run: (a) => a.changedFiles(TOKEN, 'acme-platform/infra-live', BASE, HEAD),
      },
    ],
  },
  {
    name: 'GitLab',
    host: 'https://gitlab.com',
    api: () => new GitLabVcsApi(),
    repo: 'acme/platform/infra-live',
    calls: [
      { method: 'POST', path: `${GL}/hooks`, run: (a) => a.createHook(TOKEN, 'acme/platform/infra-live', HOOK) },
      { method: 'DELETE', path: `${GL}/hooks/5`, run: (a) => a.deleteHook(TOKEN, 'acme/platform/infra-live', '5') },
      {
        method: 'POST',
        path: `${GL}/statuses/${HEAD}`,
        run: (a) => a.setCommitStatus(TOKEN, 'acme/platform/infra-live', HEAD, STATUS),
      },
      {
        method: 'POST',
        path: `${GL}/merge_requests/17/notes`,
        run: (a) => a.upsertPullRequestComment(TOKEN, 'acme/platform/infra-live', 17, { comment_id: null, body: 'b' }),
      },
      {
        method: 'PUT',
        path: `${GL}/merge_requests/17/notes/7`,
        run: (a) => a.upsertPullRequestComment(TOKEN, 'acme/platform/infra-live', 17, { comment_id: '7', body: 'b' }),
      },
      {
        method: 'GET',
        path: `${GL}/repository/compare?from=${BASE}&to=${HEAD}`,
        run: (a) => a.changedFiles(TOKEN, 'acme/platform/infra-live', BASE, HEAD),
      },
    ],
  },
  {
    name: 'Bitbucket',
    host: 'https://api.bitbucket.org',
    api: () => new BitbucketVcsApi(),
    repo: 'acme-ops/infra-live',
    calls: [
      { method: 'POST', path: `${BB}/hooks`, run: (a) => a.createHook(TOKEN, 'acme-ops/infra-live', HOOK) },
      { method: 'DELETE', path: `${BB}/hooks/5`, run: (a) => a.deleteHook(TOKEN, 'acme-ops/infra-live', '5') },
      {
        method: 'POST',
        path: `${BB}/commit/${HEAD}/statuses/build`,
        run: (a) => a.setCommitStatus(TOKEN, 'acme-ops/infra-live', HEAD, STATUS),
      },
      {
        method: 'POST',
        path: `${BB}/pullrequests/9/comments`,
        run: (a) => a.upsertPullRequestComment(TOKEN, 'acme-ops/infra-live', 9, { comment_id: null, body: 'b' }),
      },
      {
        method: 'PUT',
        path: `${BB}/pullrequests/9/comments/7`,
        run: (a) => a.upsertPullRequestComment(TOKEN, 'acme-ops/infra-live', 9, { comment_id: '7', body: 'b' }),
      },
      {
        method: 'GET',
        path: `${BB}/diffstat/${HEAD}..${BASE}?pagelen=500`,
        run: (a) => a.changedFiles(TOKEN, 'acme-ops/infra-live', BASE, HEAD),
      },
    ],
  },
];

const FAILURES: {
  name: string;
  reply: (scope: nock.Interceptor) => nock.Scope;
  expected: (call: Call) => { type: unknown; code: string } | null;
}[] = [
  {
    name: '401',
    reply: (i) => i.reply(401, { message: 'Bad credentials' }),
    expected: () => ({ type: UnauthorizedError, code: 'provider_token_expired' }),
  },
  {
    name: '403',
    reply: (i) => i.reply(403, { message: 'Forbidden' }),
    expected: () => ({ type: ConflictError, code: 'vcs_permission_missing' }),
  },
  {
    name: '404',
    reply: (i) => i.reply(404, { message: 'Not Found' }),
    // A hook already gone is deleted; an edited comment already gone is recreated (tested above).
    expected: (call) =>
      call.method === 'DELETE' || call.method === 'PATCH' || call.method === 'PUT'
        ? null
        : { type: ConflictError, code: 'vcs_permission_missing' },
  },
  {
    name: '429',
    reply: (i) => i.reply(429, { message: 'Too Many Requests' }, { 'Retry-After': '17' }),
    expected: () => ({ type: RateLimitedError, code: 'rate_limited' }),
  },
  {
    name: '502',
    reply: (i) => i.reply(502, '<html>Bad Gateway</html>'),
    expected: () => ({ type: UnavailableError, code: 'provider_unavailable' }),
  },
  {
    name: 'a network error',
    reply: (i) => i.replyWithError({ code: 'ECONNRESET', message: 'socket hang up' }),
    expected: () => ({ type: UnavailableError, code: 'provider_unavailable' }),
  },
  {
    name: 'a redirect',
    reply: (i) => i.reply(302, '', { Location: 'https://elsewhere.example/' }),
    expected: () => ({ type: UnavailableError, code: 'provider_unavailable' }),
  },
];

describe.each(ADAPTERS)('$name git API failures', ({ host, api, calls }) => {
  // A hook already gone (DELETE 404) is deleted and an edited comment already gone (PATCH/PUT 404)
  // is recreated: the adapters' own tests above cover those.
  const cases = calls.flatMap((call) =>
    FAILURES.flatMap((failureCase) => {
      const want = failureCase.expected(call);
      return want
        ? [{ label: `${call.method} ${call.path.split('?')[0]}: ${failureCase.name}`, call, failureCase, want }]
        : [];
    }),
  );
  it.each(cases)('$label', async ({ call, failureCase, want }) => {
    failureCase.reply(nock(host, auth).intercept(call.path, call.method));
    const error = await failure(call.run(api()));
    expect(error).toBeInstanceOf(want.type);
    expect(error).toMatchObject({ code: want.code });
    expect((error as Error).message).not.toContain(TOKEN);
    if (want.type === RateLimitedError) expect(error).toMatchObject({ retryAfterSeconds: 17 });
    expect(nock.isDone()).toBe(true);
  });
});

describe('resolving a commit prefix to its full SHA', () => {
  const PREFIX = HEAD.slice(0, 12);

  it('answers a full SHA as it is, without a call', async () => {
    for (const api of [new GitHubVcsApi(), new GitLabVcsApi(), new BitbucketVcsApi()]) {
      expect(await api.resolveCommit(TOKEN, 'acme/infra', HEAD)).toBe(HEAD);
    }
  });

  it("asks each provider's commit API for a prefix", async () => {
    const scopes = [
      nock('https://api.github.com', auth).get(`/repos/acme/infra/commits/${PREFIX}`).reply(200, { sha: HEAD }),
      nock('https://gitlab.com', auth)
        .get(`/api/v4/projects/acme%2Finfra/repository/commits/${PREFIX}`)
        .reply(200, { id: HEAD, short_id: HEAD.slice(0, 8) }),
      nock('https://api.bitbucket.org', auth)
        .get(`/2.0/repositories/acme/infra/commit/${PREFIX}`)
        .reply(200, { hash: HEAD, type: 'commit' }),
    ];
    for (const api of [new GitHubVcsApi(), new GitLabVcsApi(), new BitbucketVcsApi()]) {
      expect(await api.resolveCommit(TOKEN, 'acme/infra', PREFIX)).toBe(HEAD);
    }
    for (const scope of scopes) expect(scope.isDone()).toBe(true);
  });

  it('an answer without a full SHA is the provider failing, a commit it cannot see a missing permission', async () => {
    nock('https://api.bitbucket.org', auth)
      .get(`/2.0/repositories/acme/infra/commit/${PREFIX}`)
      .reply(200, { hash: PREFIX });
    const odd = await failure(new BitbucketVcsApi().resolveCommit(TOKEN, 'acme/infra', PREFIX));
    expect(odd).toBeInstanceOf(UnavailableError);
    nock('https://api.bitbucket.org', auth).get(`/2.0/repositories/acme/infra/commit/${PREFIX}`).reply(404, {});
    const missing = await failure(new BitbucketVcsApi().resolveCommit(TOKEN, 'acme/infra', PREFIX));
    expect(missing).toBeInstanceOf(ConflictError);
  });
});
