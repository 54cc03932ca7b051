import { describe, expect, it } from 'vitest';
import { GIT_CREDENTIALS_HINT, gitSourceIssues, redactGitUrl, redactSource } from '../../src/domain/gitSource.js';

const source = (fields: { url?: string; ref?: string | null; path?: string | null }) => ({
  url: fields.url ?? 'https://git.example.test/infra.git',
  ref: fields.ref ?? null,
  path: fields.path ?? null,
});

describe('the git source rule', () => {
  it.each([
    'https://git.example.test/infra.git',
    'ssh://git@git.example.test:2222/org/infra.git',
    'git@git.example.test:org/infra.git',
    'git.example.test:org/infra.git',
  ])('accepts %s', (url) => {
    expect(gitSourceIssues(source({ url, ref: 'v1.2', path: 'stacks/web' }), { allowFile: false })).toEqual([]);
  });

  it.each([['main'], ['refs/tags/v1'], ['0123456789abcdef0123456789abcdef01234567'], ['feature/a-b_c']])(
    'accepts the ref %s',
    (ref) => {
      expect(gitSourceIssues(source({ ref }), { allowFile: false })).toEqual([]);
    },
  );

  it.each([
    ['--upload-pack=touch /tmp/x', "must not start with '-'"],
    ['-c', "must not start with '-'"],
    ['main\nx', 'must not hold control characters'],
    ['a b', 'must be a branch, tag or commit name git accepts'],
    ['src:dst', 'must be a branch, tag or commit name git accepts'],
    ['a..b', 'must be a branch, tag or commit name git accepts'],
  ])('refuses the ref %j', (ref, message) => {
    expect(gitSourceIssues(source({ ref }), { allowFile: false })).toEqual([{ path: 'source.ref', message }]);
  });

  it.each([
    ['--upload-pack=touch /tmp/x', "must not start with '-'"],
    ['-oProxyCommand=x', "must not start with '-'"],
    ['https://git.example.test/a\u0000b', 'must not hold control characters or spaces'],
    ['http://git.example.test/infra.git', 'must be an https://, ssh:// or git@host:path address'],
    ['git://git.example.test/infra.git', 'must be an https://, ssh:// or git@host:path address'],
    ['ext::sh -c touch% /tmp/x', 'must not hold control characters or spaces'],
    ['ext::sh', 'must be an https://, ssh:// or git@host:path address'],
    ['/srv/git/infra.git', 'must be an https://, ssh:// or git@host:path address'],
    ['ssh://-oProxyCommand=x/infra.git', 'must name a host'],
    ['https://token@git.example.test/infra.git', GIT_CREDENTIALS_HINT],
    ['https://user:secret@git.example.test/infra.git', GIT_CREDENTIALS_HINT],
    ['ssh://git:secret@git.example.test/infra.git', GIT_CREDENTIALS_HINT],
    ['user:secret@git.example.test:infra.git', GIT_CREDENTIALS_HINT],
  ])('refuses the URL %j', (url, message) => {
    expect(gitSourceIssues(source({ url }), { allowFile: true })).toEqual([{ path: 'source.url', message }]);
  });

  it('tells how to give credentials instead', () => {
    expect(GIT_CREDENTIALS_HINT).toMatch(/credential helper/);
    expect(GIT_CREDENTIALS_HINT).toMatch(/SSH key/);
  });

  it('accepts file:// only where file sources are allowed', () => {
    expect(gitSourceIssues(source({ url: 'file:///srv/git/infra.git' }), { allowFile: true })).toEqual([]);
    expect(gitSourceIssues(source({ url: 'file:///srv/git/infra.git' }), { allowFile: false })).toEqual([
      {
        path: 'source.url',
        message: 'is a file:// address, which this agent refuses (start it with --allow-file-sources to allow them)',
      },
    ]);
  });

  it.each([
    ['-x', "must not start with '-'"],
    ['a\tb', 'must not hold control characters'],
  ])('refuses the path %j', (path, message) => {
    expect(gitSourceIssues(source({ path }), { allowFile: false })).toEqual([{ path: 'source.path', message }]);
  });
});

describe('git URLs as people see them', () => {
  it.each([
    ['https://user:secret@git.example.test/infra.git', 'https://***@git.example.test/infra.git'],
    ['https://ghp_token@git.example.test/infra.git', 'https://***@git.example.test/infra.git'],
    ['ssh://git:secret@git.example.test/infra.git', 'ssh://***@git.example.test/infra.git'],
    ['ssh://git@git.example.test/infra.git', 'ssh://git@git.example.test/infra.git'],
    ['user:secret@git.example.test:infra.git', '***@git.example.test:infra.git'],
    ['git@git.example.test:infra.git', 'git@git.example.test:infra.git'],
    ['https://git.example.test/a@b.git', 'https://git.example.test/a@b.git'],
  ])('shows %s as %s', (url, shown) => {
    expect(redactGitUrl(url)).toBe(shown);
    expect(redactSource({ type: 'git', url, ref: null, path: null }).url).toBe(shown);
  });
});
