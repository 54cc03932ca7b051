/**
 * The archive of a commit (issue 23): the control plane fetches it with the connecting person's
 * token and makes a configuration version of it; agents never see the token. The answers are the
 * shapes the providers send: GitHub's tarball endpoint redirects (302) to codeload with a grant
 * of its own in the URL, GitLab and Bitbucket answer the archive.
 */
import { gzipSync } from 'node:zlib';
import { ConflictError, UnauthorizedError, UnavailableError, type VcsArchive } from '@trellis/core';
import { BitbucketVcsApi, GitHubVcsApi, GitLabVcsApi } from '@trellis/providers';
import nock from 'nock';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

const TOKEN = 'gho_archive_7d1e0c44b2a9f3e5';
const SHA = '8457785ada4ab6182c16fbac60586081edf51999';
const BYTES = gzipSync(Buffer.from('not really a tar, the adapter does not read it'));

beforeAll(() => {
  nock.disableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
});

async function bytesOf(archive: VcsArchive): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of archive.body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('GitHub tarball', () => {
  const codeload = `https://codeload.github.com/acme-platform/infra-live/legacy.tar.gz/${SHA}?token=AAAC6XWQ5TEMPORARYGRANT`;

  it('follows the redirect to codeload without the token and streams the archive', async () => {
    const api = nock('https://api.github.com', { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .get(`/repos/acme-platform/infra-live/tarball/${SHA}`)
      .reply(302, '', { Location: codeload, 'Content-Length': '0' });
    const download = nock('https://codeload.github.com', { badheaders: ['authorization'] })
      .get(`/acme-platform/infra-live/legacy.tar.gz/${SHA}`)
      .query({ token: 'AAAC6XWQ5TEMPORARYGRANT' })
      .reply(200, BYTES, {
        'Content-Type': 'application/x-gzip',
        'Content-Disposition': `attachment; filename=acme-platform-infra-live-${SHA.slice(0, 7)}.tar.gz`,
      });
    const archive = await new GitHubVcsApi().fetchArchive(TOKEN, 'acme-platform/infra-live', SHA);
    expect(archive.strip_components).toBe(1);
    expect((await bytesOf(archive)).equals(BYTES)).toBe(true);
    expect(api.isDone() && download.isDone()).toBe(true);
  });

  it('names a branch as the ref, URL-encoded', async () => {
    nock('https://ghe.acme.example')
      .get('/api/v3/repos/acme-platform/infra-live/tarball/feature%2Fsubnets')
      .reply(200, BYTES);
    const archive = await new GitHubVcsApi({ baseUrl: 'https://ghe.acme.example' }).fetchArchive(
      TOKEN,
      'acme-platform/infra-live',
      'feature/subnets',
    );
    expect((await bytesOf(archive)).equals(BYTES)).toBe(true);
  });

  it('refuses a redirect to plain http elsewhere', async () => {
    nock('https://api.github.com')
      .get(`/repos/acme-platform/infra-live/tarball/${SHA}`)
      .reply(302, '', { Location: 'http://169.254.169.254/latest/meta-data/' });
    const error = await failure(new GitHubVcsApi().fetchArchive(TOKEN, 'acme-platform/infra-live', SHA));
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).message).toMatch(
      /redirected the archive download to http:\/\/169\.254\.169\.254/,
    );
  });

  it('stops after three redirects', async () => {
    nock('https://api.github.com')
      .get(`/repos/acme-platform/infra-live/tarball/${SHA}`)
      .reply(302, '', { Location: 'https://codeload.github.com/a' });
    nock('https://codeload.github.com')
      .get('/a')
      .reply(302, '', { Location: '/b' })
      .get('/b')
      .reply(302, '', { Location: '/c' })
      .get('/c')
      .reply(302, '', { Location: '/d' });
    expect(await failure(new GitHubVcsApi().fetchArchive(TOKEN, 'acme-platform/infra-live', SHA))).toMatchObject({
      code: 'provider_unavailable',
    });
  });

  it('translates 404 into vcs_permission_missing and 401 into provider_token_expired', async () => {
    nock('https://api.github.com')
      .get(`/repos/acme-platform/infra-live/tarball/${SHA}`)
      .reply(404, { message: 'Not Found' })
      .get(`/repos/acme-platform/infra-live/tarball/${SHA}`)
      .reply(401, { message: 'Bad credentials' });
    const denied = await failure(new GitHubVcsApi().fetchArchive(TOKEN, 'acme-platform/infra-live', SHA));
    expect(denied).toBeInstanceOf(ConflictError);
    expect((denied as ConflictError).message).toMatch(
      /cannot see the repository \(404\) when Trellis tried to download an archive/,
    );
    expect(await failure(new GitHubVcsApi().fetchArchive(TOKEN, 'acme-platform/infra-live', SHA))).toBeInstanceOf(
      UnauthorizedError,
    );
  });
});

describe('GitLab archive', () => {
  it('GETs repository/archive.tar.gz of the project path with the commit', async () => {
    const scope = nock('https://gitlab.com', { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .get('/api/v4/projects/acme-platform%2Finfra-live/repository/archive.tar.gz')
      .query({ sha: SHA })
      .reply(200, BYTES, {
        'Content-Type': 'application/octet-stream',
        'Content-Disposition': `attachment; filename="infra-live-${SHA}-${SHA}.tar.gz"`,
        'Content-Transfer-Encoding': 'binary',
      });
    const archive = await new GitLabVcsApi().fetchArchive(TOKEN, 'acme-platform/infra-live', SHA);
    expect(archive.strip_components).toBe(1);
    expect((await bytesOf(archive)).equals(BYTES)).toBe(true);
    expect(scope.isDone()).toBe(true);
  });

  it('answers a provider failure as provider_unavailable', async () => {
    nock('https://gitlab.com')
      .get('/api/v4/projects/acme-platform%2Finfra-live/repository/archive.tar.gz')
      .query({ sha: SHA })
      .reply(500, 'oops');
    expect(await failure(new GitLabVcsApi().fetchArchive(TOKEN, 'acme-platform/infra-live', SHA))).toMatchObject({
      code: 'provider_unavailable',
    });
  });
});

describe('Bitbucket archive', () => {
  it('GETs /{workspace}/{slug}/get/{commit}.tar.gz on the web address, following its download redirect', async () => {
    const web = nock('https://bitbucket.org', { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .get(`/acme-platform/infra-live/get/${SHA}.tar.gz`)
      .reply(302, '', { Location: 'https://bbuseruploads.s3.amazonaws.com/archive.tar.gz?Signature=abc' });
    const s3 = nock('https://bbuseruploads.s3.amazonaws.com', { badheaders: ['authorization'] })
      .get('/archive.tar.gz')
      .query({ Signature: 'abc' })
      .reply(200, BYTES);
    const archive = await new BitbucketVcsApi().fetchArchive(TOKEN, 'acme-platform/infra-live', SHA);
    expect((await bytesOf(archive)).equals(BYTES)).toBe(true);
    expect(web.isDone() && s3.isDone()).toBe(true);
  });
});
