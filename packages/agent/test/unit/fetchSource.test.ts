import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobFailure } from '../../src/job/errors.js';
import { cloneGitSource, hostGit } from '../../src/job/fetchSource.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-fetch-source-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A bare repository with `main.tf` in `infra/`, tagged v1; its file:// URL. */
function localRepo(): string {
  const work = join(dir, 'work');
  mkdirSync(join(work, 'infra'), { recursive: true });
  writeFileSync(join(work, 'infra', 'main.tf'), 'output "x" { value = 1 }\n');
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@e',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@e',
  };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: work, env, stdio: 'ignore' });
  git('init', '--quiet', '--initial-branch=main');
  git('add', '.');
  git('commit', '--quiet', '-m', 'infra');
  git('tag', 'v1');
  execFileSync('git', ['clone', '--quiet', '--bare', work, join(dir, 'infra.git')], { stdio: 'ignore' });
  return `file://${join(dir, 'infra.git')}`;
}

const HOST_ENV = {
  ...process.env,
  TRELLIS_WORKER_TOKEN: 'trellis-worker-token-secret',
  TRELLIS_URL: 'https://trellis.example.test',
  TF_HTTP_PASSWORD: 'stale-http-password',
  TF_VAR_secret: 'stale-variable',
};

describe('fetching a git source', () => {
  it('runs git without the agent’s variables and with only the allowed transports', async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    const dump = join(dir, 'git-env');
    writeFileSync(join(bin, 'git'), `#!/bin/sh\nenv > "${dump}"\necho "$@" > "${dump}.args"\n`);
    chmodSync(join(bin, 'git'), 0o755);
    const run = hostGit({ ...HOST_ENV, PATH: `${bin}:${process.env.PATH}` }, { allowFile: false }, () => {});
    await run(['status'], dir);
    const env = readFileSync(dump, 'utf8');
    expect(env).toContain('GIT_TERMINAL_PROMPT=0');
    expect(env).not.toMatch(/^TRELLIS_/m);
    expect(env).not.toMatch(/^TF_HTTP_/m);
    expect(env).not.toMatch(/^TF_VAR_/m);
    expect(env).not.toContain('trellis-worker-token-secret');
    expect(readFileSync(`${dump}.args`, 'utf8').trim()).toBe(
      '-c protocol.allow=never -c protocol.https.allow=always -c protocol.ssh.allow=always -c protocol.file.allow=never status',
    );
  });

  it('clones a file:// repository at a ref when file sources are allowed', async () => {
    const url = localRepo();
    const lines: string[] = [];
    const target = await cloneGitSource(
      { type: 'git', url, ref: 'v1', path: 'infra' },
      join(dir, 'src'),
      hostGit(HOST_ENV, { allowFile: true }, (line) => lines.push(line)),
      { allowFile: true },
    );
    expect(readFileSync(join(target, 'main.tf'), 'utf8')).toContain('output "x"');
  });

  it('refuses a file:// repository unless file sources are allowed, and git refuses it too', async () => {
    const url = localRepo();
    const calls: string[][] = [];
    await expect(
      cloneGitSource(
        { type: 'git', url, ref: 'v1', path: null },
        join(dir, 'src'),
        async (args) => {
          calls.push(args);
        },
        { allowFile: false },
      ),
    ).rejects.toThrow(
      /source\.url is a file:\/\/ address, which this agent refuses \(start it with --allow-file-sources/,
    );
    expect(calls).toEqual([]);
    // Git itself, as the agent runs it, refuses the transport (a submodule could name one).
    const run = hostGit(HOST_ENV, { allowFile: false }, () => {});
    await expect(run(['clone', '--quiet', url, join(dir, 'copy')], dir)).rejects.toThrow(JobFailure);
    expect(existsSync(join(dir, 'copy', 'infra'))).toBe(false);
  });

  it.each([
    [{ ref: '--upload-pack=touch MARKER' }, /source\.ref must not start with '-'/],
    [{ url: '--upload-pack=touch MARKER' }, /source\.url must not start with '-'/],
    [{ ref: '-c' }, /source\.ref must not start with '-'/],
  ])('runs nothing for the hostile source %j', async (hostile, message) => {
    const url = localRepo();
    const marker = join(dir, 'marker');
    const source = {
      type: 'git' as const,
      url: (hostile.url ?? url).replace('MARKER', marker),
      ref: (hostile.ref ?? 'v1').replace('MARKER', marker),
      path: null,
    };
    const run = hostGit(HOST_ENV, { allowFile: true }, () => {});
    let calls = 0;
    const error = await cloneGitSource(
      source,
      join(dir, 'src'),
      (args, cwd) => {
        calls += 1;
        return run(args, cwd);
      },
      { allowFile: true },
    ).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(JobFailure);
    expect((error as Error).message).toMatch(/^refusing the git source, nothing was run: /);
    expect((error as Error).message).toMatch(message);
    expect(calls).toBe(0);
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses credentials in the URL and says where they belong', async () => {
    await expect(
      cloneGitSource(
        { type: 'git', url: 'https://user:secret@git.example.test/infra.git', ref: null, path: null },
        join(dir, 'src'),
        async () => {},
        { allowFile: false },
      ),
    ).rejects.toThrow(/source\.url must not hold credentials: .*credential helper.*SSH key/);
  });
});
