import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VineSource } from '@trellis/core';
import { type GitServer, startGitServer } from '@trellis/testkit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JobFailure } from '../../src/job/errors.js';
import { cloneGitSource, hostGit } from '../../src/job/fetchSource.js';

const PASSWORD = 'gho_private_clone_token_5f3e9a0c';
const CREDENTIALS = { username: 'x-access-token', password: PASSWORD };
let server: GitServer;
let strict: GitServer;
let shas: string[];
let dir: string;

beforeAll(async () => {
  server = await startGitServer(CREDENTIALS);
  shas = server.createRepo('infra', [
    { 'infra/main.tf': 'output "commit" { value = "one" }\n' },
    { 'infra/main.tf': 'output "commit" { value = "two" }\n' },
  ]);
  // The branch moves on after the commit a job pins.
  server.commit('infra', { 'infra/main.tf': 'output "commit" { value = "three" }\n' });
  // A server that refuses commits it does not advertise (no uploadpack.allowReachableSHA1InWant).
  strict = await startGitServer({ ...CREDENTIALS, allowReachableSha1InWant: false });
});

afterAll(async () => {
  await server?.stop();
  await strict?.stop();
});

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-private-clone-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A `git` on PATH that records its arguments and environment, then runs the real git. */
function recordingGit(): { env: NodeJS.ProcessEnv; args: () => string; envs: () => string } {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const realGit = process.env.PATH?.split(':')
    .map((part) => join(part, 'git'))
    .find((candidate) => existsSync(candidate));
  writeFileSync(
    join(bin, 'git'),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> "${dir}/git-args"\nenv >> "${dir}/git-env"\nexec "${realGit}" "$@"\n`,
  );
  chmodSync(join(bin, 'git'), 0o755);
  return {
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, GIT_SSL_CAINFO: server.caFile, HOME: dir },
    args: () => readFileSync(join(dir, 'git-args'), 'utf8'),
    envs: () => readFileSync(join(dir, 'git-env'), 'utf8'),
  };
}

const source = (extra: Partial<Extract<VineSource, { type: 'git' }>> = {}, at = server) =>
  ({ type: 'git', url: at.url('infra'), ref: 'main', path: 'infra', ...extra }) as Extract<VineSource, { type: 'git' }>;

/**
 * The host's own git credentials (what the agent's host gives git: here a `store` credential helper
 * configured through git's environment), for `at`'s origin.
 */
function hostCredentials(at: GitServer, password = PASSWORD): NodeJS.ProcessEnv {
  const file = join(dir, `credentials-${new URL(at.origin).port}`);
  writeFileSync(file, `${at.origin.replace('https://', `https://${CREDENTIALS.username}:${password}@`)}\n`, {
    mode: 0o600,
  });
  return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'credential.helper', GIT_CONFIG_VALUE_0: `store --file=${file}` };
}

describe('cloning a private repository with the host’s own credentials', () => {
  it('checks out exactly the pinned commit, though the branch has moved on', async () => {
    const git = recordingGit();
    const lines: string[] = [];
    const target = await cloneGitSource(
      source({ commit: shas[0] }),
      join(dir, 'src'),
      hostGit({ ...git.env, ...hostCredentials(server) }, { allowFile: false }, (line) => lines.push(line)),
      { allowFile: false },
    );
    expect(readFileSync(join(target, 'main.tf'), 'utf8')).toContain('"one"');
    expect(server.stats.authorized).toBeGreaterThan(0);
    // The password is in no argument and no output; git never prompts.
    expect(git.args()).not.toContain(PASSWORD);
    expect(git.envs()).toContain('GIT_TERMINAL_PROMPT=0');
    expect(lines.join('\n')).not.toContain(PASSWORD);
  });

  it('checks out the head of the ref without a pinned commit', async () => {
    const git = recordingGit();
    const target = await cloneGitSource(
      source(),
      join(dir, 'src'),
      hostGit({ ...git.env, ...hostCredentials(server) }, { allowFile: false }, () => {}),
      { allowFile: false },
    );
    expect(readFileSync(join(target, 'main.tf'), 'utf8')).toContain('"three"');
  });

  it('falls back to fetching the ref when the server refuses an unadvertised commit', async () => {
    const git = recordingGit();
    const shasOfStrict = strict.createRepo('pinned', [{ 'infra/main.tf': 'first\n' }, { 'infra/main.tf': 'second\n' }]);
    const target = await cloneGitSource(
      { type: 'git', url: strict.url('pinned'), ref: 'main', path: 'infra', commit: shasOfStrict[0] },
      join(dir, 'src'),
      hostGit(
        { ...git.env, ...hostCredentials(strict), GIT_SSL_CAINFO: strict.caFile },
        { allowFile: false },
        () => {},
      ),
      { allowFile: false },
    );
    expect(readFileSync(join(target, 'main.tf'), 'utf8')).toBe('first\n');
    // The fetch of the commit itself was refused; the ref's fetch brought it.
    const fetches = git
      .args()
      .split('\n')
      .filter((line) => / fetch /.test(line));
    expect(fetches).toHaveLength(2);
    expect(fetches[0]).toContain(shasOfStrict[0]);
    expect(fetches[1]).toMatch(/origin main$/);
  });

  it('fails clearly with wrong credentials, and without any', async () => {
    const git = recordingGit();
    const failure = await cloneGitSource(
      source({ commit: shas[1] }),
      join(dir, 'src'),
      hostGit({ ...git.env, ...hostCredentials(server, 'wrong-one') }, { allowFile: false }, () => {}),
      { allowFile: false },
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(JobFailure);
    expect((failure as Error).message).toMatch(
      /could not fetch commit .*(Authentication failed|terminal prompts disabled)/,
    );
    const none = await cloneGitSource(
      source(),
      join(dir, 'src2'),
      hostGit(git.env, { allowFile: false }, () => {}),
      { allowFile: false },
    ).catch((error: unknown) => error);
    expect((none as Error).message).toMatch(/git fetch failed: .*(could not read Username|terminal prompts disabled)/);
  });

  it('fails clearly when the pinned commit is not in the repository', async () => {
    const git = recordingGit();
    const missing = 'f'.repeat(40);
    await expect(
      cloneGitSource(
        source({ commit: missing }),
        join(dir, 'src'),
        hostGit({ ...git.env, ...hostCredentials(server) }, { allowFile: false }, () => {}),
        { allowFile: false },
      ),
    ).rejects.toThrow(`commit ${missing} is not in`);
  });

  it('refuses a commit that is not a full commit id, running nothing', async () => {
    let calls = 0;
    await expect(
      cloneGitSource(
        source({ commit: '--upload-pack=x' }),
        join(dir, 'src'),
        async () => {
          calls += 1;
        },
        { allowFile: false },
      ),
    ).rejects.toThrow(/source\.commit must be a full commit id/);
    expect(calls).toBe(0);
  });
});
