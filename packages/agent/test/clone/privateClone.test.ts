import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VineSource } from '@trellis/core';
import { type GitServer, startGitServer } from '@trellis/testkit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JobFailure } from '../../src/job/errors.js';
import { cloneGitSource, hostGit, writeGitAskpass } from '../../src/job/fetchSource.js';

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

describe('cloning a private repository', () => {
  it('checks out exactly the pinned commit, though the branch has moved on', async () => {
    const git = recordingGit();
    const askpass = writeGitAskpass(join(dir, 'private'), server.url('infra'), CREDENTIALS);
    const lines: string[] = [];
    const target = await cloneGitSource(
      source({ commit: shas[0] }),
      join(dir, 'src'),
      hostGit(git.env, { allowFile: false }, (line) => lines.push(line), askpass),
      { allowFile: false },
    );
    expect(readFileSync(join(target, 'main.tf'), 'utf8')).toContain('"one"');
    expect(server.stats.authorized).toBeGreaterThan(0);
    // The password is in no argument, no script, no output; git's environment has it, for the askpass only.
    expect(git.args()).toContain('credential.helper=');
    expect(git.args()).not.toContain(PASSWORD);
    expect(readFileSync(askpass.script, 'utf8')).not.toContain(PASSWORD);
    expect((await import('node:fs')).statSync(askpass.script).mode & 0o777).toBe(0o700);
    expect(git.envs()).toContain('GIT_TERMINAL_PROMPT=0');
    expect(git.envs()).toContain(`GIT_ASKPASS=${askpass.script}`);
    expect(lines.join('\n')).not.toContain(PASSWORD);
    askpass.remove();
    expect(existsSync(askpass.script)).toBe(false);
  });

  it('checks out the head of the ref without a pinned commit', async () => {
    const git = recordingGit();
    const askpass = writeGitAskpass(join(dir, 'private'), server.url('infra'), CREDENTIALS);
    const target = await cloneGitSource(
      source(),
      join(dir, 'src'),
      hostGit(git.env, { allowFile: false }, () => {}, askpass),
      { allowFile: false },
    );
    expect(readFileSync(join(target, 'main.tf'), 'utf8')).toContain('"three"');
  });

  it('falls back to fetching the ref when the server refuses an unadvertised commit', async () => {
    const git = recordingGit();
    const shasOfStrict = strict.createRepo('pinned', [{ 'infra/main.tf': 'first\n' }, { 'infra/main.tf': 'second\n' }]);
    const askpass = writeGitAskpass(join(dir, 'private'), strict.url('pinned'), CREDENTIALS);
    const target = await cloneGitSource(
      { type: 'git', url: strict.url('pinned'), ref: 'main', path: 'infra', commit: shasOfStrict[0] },
      join(dir, 'src'),
      hostGit({ ...git.env, GIT_SSL_CAINFO: strict.caFile }, { allowFile: false }, () => {}, askpass),
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
    const wrong = writeGitAskpass(join(dir, 'private'), server.url('infra'), { ...CREDENTIALS, password: 'wrong-one' });
    const failure = await cloneGitSource(
      source({ commit: shas[1] }),
      join(dir, 'src'),
      hostGit(git.env, { allowFile: false }, () => {}, wrong),
      { allowFile: false },
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(JobFailure);
    expect((failure as Error).message).toMatch(/could not fetch commit .*Authentication failed/);
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
    const askpass = writeGitAskpass(join(dir, 'private'), server.url('infra'), CREDENTIALS);
    const missing = 'f'.repeat(40);
    await expect(
      cloneGitSource(
        source({ commit: missing }),
        join(dir, 'src'),
        hostGit(git.env, { allowFile: false }, () => {}, askpass),
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

  it('never answers the prompts of another host (a submodule elsewhere gets nothing)', async () => {
    const askpass = writeGitAskpass(join(dir, 'private'), server.url('infra'), CREDENTIALS);
    const { execFileSync } = await import('node:child_process');
    const ask = (prompt: string) => {
      try {
        return execFileSync(askpass.script, [prompt], { env: { ...askpass.env }, encoding: 'utf8' }).trim();
      } catch {
        return null;
      }
    };
    expect(ask(`Username for '${server.origin}': `)).toBe('x-access-token');
    expect(ask(`Password for 'https://x-access-token@${new URL(server.origin).host}': `)).toBe(PASSWORD);
    expect(ask(`Username for 'https://evil.example': `)).toBeNull();
    expect(ask(`Password for 'https://x-access-token@evil.example': `)).toBeNull();
  });
});
