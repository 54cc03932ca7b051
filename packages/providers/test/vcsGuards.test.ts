/**
 * The provider calls behind the guards of git-driven runs (issue 23), against nock with the
 * providers' recorded answer shapes: how one commit stands to another (auto-deploy deploys only a
 * newer one), and the neutral status an ignored fork's pull request gets in each provider's words.
 */
import { type CommitRelation, UnavailableError } from '@trellis/core';
import { BitbucketVcsApi, GitHubVcsApi, GitLabVcsApi } from '@trellis/providers';
import nock from 'nock';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

const TOKEN = 'gho_guard_51c0e9a7d3';
const BASE = '7e2bbeac059d724b1d148ee6bc26b107289f35c3';
const HEAD = '8457785ada4ab6182c16fbac60586081edf51999';
const OTHER = '0633961195c27d9d2445e233f84cf07b07986fab';
const NEUTRAL = {
  state: 'neutral' as const,
  context: 'trellis/prod/network',
  description: 'Not planned: pull requests from forks are off for this vine',
  target_url: 'https://trellis.acme.example/configurations/5f0b2c1e',
};
const auth = { reqheaders: { authorization: `Bearer ${TOKEN}` } };

beforeAll(() => {
  nock.disableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
});

/** GitHub's compare answer (trimmed): the relation is its `status`. */
const githubCompare = (status: CommitRelation) => ({
  url: `https://api.github.com/repos/acme-platform/infra-live/compare/${BASE}...${HEAD}`,
  status,
  ahead_by: status === 'ahead' ? 2 : 0,
  behind_by: status === 'behind' ? 3 : 0,
  total_commits: status === 'ahead' ? 2 : 0,
  base_commit: { sha: BASE },
  merge_base_commit: { sha: status === 'behind' ? HEAD : BASE },
  commits: [],
  files: [],
});

describe('how one commit stands to another', () => {
  it("GitHub: the compare API's status, asking for no more than one commit", async () => {
    for (const relation of ['ahead', 'behind', 'diverged'] as const) {
      const scope = nock('https://api.github.com', auth)
        .get(`/repos/acme-platform/infra-live/compare/${BASE}...${HEAD}`)
        .query({ per_page: '1' })
        .reply(200, githubCompare(relation));
      expect(await new GitHubVcsApi().compareCommits(TOKEN, 'acme-platform/infra-live', BASE, HEAD)).toBe(relation);
      expect(scope.isDone()).toBe(true);
    }
    // The same commit needs no call.
    expect(await new GitHubVcsApi().compareCommits(TOKEN, 'acme-platform/infra-live', HEAD, HEAD)).toBe('identical');
    nock('https://api.github.com', auth)
      .get(`/repos/acme-platform/infra-live/compare/${BASE}...${HEAD}`)
      .query(true)
      .reply(200, { commits: [] });
    await expect(
      new GitHubVcsApi().compareCommits(TOKEN, 'acme-platform/infra-live', BASE, HEAD),
    ).rejects.toBeInstanceOf(UnavailableError);
  });

  it("GitLab: the merge base API; the base is head's ancestor, head is base's, or neither; 400 when unrelated", async () => {
    const path = '/api/v4/projects/acme%2Fplatform%2Finfra-live/repository/merge_base';
    const mergeBase = (id: string) => ({ id, short_id: id.slice(0, 8), title: 'Initial commit', parent_ids: [] });
    const cases: [string, CommitRelation][] = [
      [BASE, 'ahead'],
      [HEAD, 'behind'],
      [OTHER, 'diverged'],
    ];
    for (const [answer, relation] of cases) {
      const scope = nock('https://gitlab.com', auth)
        .get(path)
        .query({ 'refs[]': [BASE, HEAD] })
        .reply(200, mergeBase(answer));
      expect(await new GitLabVcsApi().compareCommits(TOKEN, 'acme/platform/infra-live', BASE, HEAD)).toBe(relation);
      expect(scope.isDone()).toBe(true);
    }
    nock('https://gitlab.com', auth)
      .get(path)
      .query(true)
      .reply(400, { message: '400 Bad request - Could not find merge base' });
    expect(await new GitLabVcsApi().compareCommits(TOKEN, 'acme/platform/infra-live', BASE, HEAD)).toBe('diverged');
  });

  it('Bitbucket: the merge-base API of `<base>..<head>`', async () => {
    const path = `/2.0/repositories/acme-ops/infra-live/merge-base/${BASE}..${HEAD}`;
    const cases: [string, CommitRelation][] = [
      [BASE, 'ahead'],
      [HEAD, 'behind'],
      [OTHER, 'diverged'],
    ];
    for (const [hash, relation] of cases) {
      const scope = nock('https://api.bitbucket.org', auth)
        .get(path)
        .reply(200, { type: 'commit', hash, message: 'infra: base\n', date: '2026-11-20T12:00:00+00:00' });
      expect(await new BitbucketVcsApi().compareCommits(TOKEN, 'acme-ops/infra-live', BASE, HEAD)).toBe(relation);
      expect(scope.isDone()).toBe(true);
    }
  });
});

describe('the neutral status of an ignored fork pull request', () => {
  it('GitHub has no neutral status state: error (nothing was checked), with the reason', async () => {
    const scope = nock('https://api.github.com', auth)
      .post(`/repos/acme-platform/infra-live/statuses/${HEAD}`, {
        state: 'error',
        context: NEUTRAL.context,
        description: NEUTRAL.description,
        target_url: NEUTRAL.target_url,
      })
      .reply(201, { id: 1, state: 'error' });
    await new GitHubVcsApi().setCommitStatus(TOKEN, 'acme-platform/infra-live', HEAD, NEUTRAL);
    expect(scope.isDone()).toBe(true);
  });

  it('GitLab: skipped', async () => {
    const scope = nock('https://gitlab.com', auth)
      .post(`/api/v4/projects/acme%2Fplatform%2Finfra-live/statuses/${HEAD}`, (body) => body.state === 'skipped')
      .reply(201, { id: 1, status: 'skipped' });
    await new GitLabVcsApi().setCommitStatus(TOKEN, 'acme/platform/infra-live', HEAD, NEUTRAL);
    expect(scope.isDone()).toBe(true);
  });

  it('Bitbucket: STOPPED', async () => {
    const scope = nock('https://api.bitbucket.org', auth)
      .post(`/2.0/repositories/acme-ops/infra-live/commit/${HEAD}/statuses/build`, (body) => body.state === 'STOPPED')
      .reply(201, { state: 'STOPPED' });
    await new BitbucketVcsApi().setCommitStatus(TOKEN, 'acme-ops/infra-live', HEAD, NEUTRAL);
    expect(scope.isDone()).toBe(true);
  });
});
