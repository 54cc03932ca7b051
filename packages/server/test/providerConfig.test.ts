import { randomBytes } from 'node:crypto';
import { GitHubVcsApi, GitLabVcsApi } from '@trellis/providers';
import { buildProviders, buildVcs, ConfigError, configuredProviders, loadConfig } from '@trellis/server';
import { describe, expect, it } from 'vitest';

const BASE = { TRELLIS_DATA_DIR: '/tmp/trellis-config-test', CLI_JWT_SECRET: 'x'.repeat(40) };

describe('provider configuration', () => {
  it('configures the providers whose client id and secret are set, with base URLs and labels', () => {
    const config = loadConfig({
      ...BASE,
      TRELLIS_GITHUB_CLIENT_ID: 'gh',
      TRELLIS_GITHUB_CLIENT_SECRET: 's',
      TRELLIS_GITHUB_BASE_URL: 'https://ghe.example.com',
      TRELLIS_GOOGLE_CLIENT_ID: 'g',
      TRELLIS_GOOGLE_CLIENT_SECRET: 's',
      TRELLIS_GOOGLE_BASE_URL: 'https://example.okta.com/oauth2/default',
      TRELLIS_GOOGLE_DISPLAY_NAME: 'Okta',
    });
    expect(configuredProviders(config)).toEqual([
      { id: 'github', name: 'GitHub Enterprise' },
      { id: 'google', name: 'Okta' },
    ]);
    const ports = buildProviders(config);
    expect(Object.keys(ports.repositories)).toEqual(['github']);
    expect(config.bootstrapToken).toBeNull();
  });

  it('wires the git providers of git-driven runs at the configured base URLs (API and clone URLs)', () => {
    const config = loadConfig({
      ...BASE,
      TRELLIS_GITHUB_CLIENT_ID: 'gh',
      TRELLIS_GITHUB_CLIENT_SECRET: 's',
      TRELLIS_GITHUB_BASE_URL: 'https://ghe.example.com/',
      TRELLIS_GITLAB_CLIENT_ID: 'gl',
      TRELLIS_GITLAB_CLIENT_SECRET: 's',
      TRELLIS_GOOGLE_CLIENT_ID: 'g',
      TRELLIS_GOOGLE_CLIENT_SECRET: 's',
    });
    const vcs = buildVcs(config);
    expect(Object.keys(vcs)).toEqual(['github', 'gitlab']);
    expect(vcs.github?.api).toBeInstanceOf(GitHubVcsApi);
    expect((vcs.github?.api as GitHubVcsApi | undefined)?.apiBase).toBe('https://ghe.example.com/api/v3');
    expect(vcs.github?.cloneUrl('acme/infra')).toBe('https://ghe.example.com/acme/infra.git');
    expect(vcs.gitlab?.api).toBeInstanceOf(GitLabVcsApi);
    expect(vcs.gitlab?.cloneUrl('acme/platform/infra')).toBe('https://gitlab.com/acme/platform/infra.git');
    expect(vcs.bitbucket).toBeUndefined();
  });

  it('calls the API at TRELLIS_<PROVIDER>_API_URL when set, still cloning from the base URL', () => {
    const config = loadConfig({
      ...BASE,
      TRELLIS_GITHUB_CLIENT_ID: 'gh',
      TRELLIS_GITHUB_CLIENT_SECRET: 's',
      TRELLIS_GITHUB_BASE_URL: 'https://git.example.com',
      TRELLIS_GITHUB_API_URL: 'http://127.0.0.1:9999/github-api/',
      TRELLIS_GITLAB_CLIENT_ID: 'gl',
      TRELLIS_GITLAB_CLIENT_SECRET: 's',
    });
    const vcs = buildVcs(config);
    expect((vcs.github?.api as GitHubVcsApi | undefined)?.apiBase).toBe('http://127.0.0.1:9999/github-api');
    expect(vcs.github?.cloneUrl('acme/infra')).toBe('https://git.example.com/acme/infra.git');
    expect((vcs.gitlab?.api as GitLabVcsApi | undefined)?.apiBase).toBe('https://gitlab.com/api/v4');
    expect(() =>
      loadConfig({
        ...BASE,
        TRELLIS_GITHUB_CLIENT_ID: 'gh',
        TRELLIS_GITHUB_CLIENT_SECRET: 's',
        TRELLIS_GITHUB_API_URL: 'file:///etc/passwd',
      }),
    ).toThrow(/TRELLIS_GITHUB_API_URL/);
  });

  it('refuses half an OAuth app and a base URL that is not http(s)', () => {
    expect(() => loadConfig({ ...BASE, TRELLIS_GITLAB_CLIENT_ID: 'only-the-id' })).toThrow(ConfigError);
    expect(() =>
      loadConfig({
        ...BASE,
        TRELLIS_GITLAB_CLIENT_ID: 'a',
        TRELLIS_GITLAB_CLIENT_SECRET: 'b',
        TRELLIS_GITLAB_BASE_URL: 'ftp://x',
      }),
    ).toThrow(/TRELLIS_GITLAB_BASE_URL/);
  });

  it('reads TRELLIS_ENCRYPTION_KEY as base64 or hex, several for rotation, and refuses other lengths', () => {
    const key = randomBytes(32);
    const keys = loadConfig({
      ...BASE,
      TRELLIS_ENCRYPTION_KEY: `${key.toString('base64')}, ${key.toString('hex')}`,
    }).encryptionKeys;
    expect(keys.map((k) => Buffer.from(k).equals(key))).toEqual([true, true]);
    expect(loadConfig(BASE).encryptionKeys).toEqual([]);
    expect(() => loadConfig({ ...BASE, TRELLIS_ENCRYPTION_KEY: randomBytes(16).toString('base64') })).toThrow(
      /TRELLIS_ENCRYPTION_KEY/,
    );
    expect(() => loadConfig({ ...BASE, TRELLIS_ENCRYPTION_KEY: 'not a key at all' })).toThrow(ConfigError);
  });
});
