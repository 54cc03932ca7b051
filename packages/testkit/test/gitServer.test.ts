import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitServer, startGitServer } from '../src/gitServer.js';

const run = promisify(execFile);
const PASSWORD = 'git-server-test-password-0123';
let server: GitServer;
let dir: string;
let shas: string[];

beforeAll(async () => {
  server = await startGitServer({ username: 'x-access-token', password: PASSWORD });
  shas = server.createRepo('infra', [{ 'main.tf': 'one\n' }, { 'main.tf': 'two\n', 'extra.txt': 'x\n' }]);
  dir = mkdtempSync(join(tmpdir(), 'trellis-git-server-test-'));
  // Answers git's prompts from the environment, the way the agent's askpass does.
  writeFileSync(join(dir, 'askpass.sh'), '#!/bin/sh\ncase "$1" in Username*) echo "$U";; *) echo "$P";; esac\n', {
    mode: 0o700,
  });
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function clone(target: string, credentials: { username: string; password: string } | null) {
  return run('git', ['-c', 'credential.helper=', 'clone', '--quiet', server.url('infra'), join(dir, target)], {
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      GIT_SSL_CAINFO: server.caFile,
      GIT_ASKPASS: credentials ? join(dir, 'askpass.sh') : '',
      U: credentials?.username ?? '',
      P: credentials?.password ?? '',
    },
  });
}

describe('the loopback git server', () => {
  it('creates commits and answers their SHAs in order', () => {
    expect(shas).toHaveLength(2);
    for (const sha of shas) expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(shas[0]).not.toBe(shas[1]);
  });

  it('serves a clone to the right credentials, over HTTPS with its own certificate', async () => {
    const before = server.stats.authorized;
    await clone('good', { username: 'x-access-token', password: PASSWORD });
    expect(readFileSync(join(dir, 'good', 'main.tf'), 'utf8')).toBe('two\n');
    const head = await run('git', ['rev-parse', 'HEAD'], { cwd: join(dir, 'good') });
    expect(head.stdout.trim()).toBe(shas[1]);
    expect(server.stats.authorized).toBeGreaterThan(before);
    expect(server.stats.withCredentials).toBeGreaterThan(0);
  });

  it('refuses a clone without credentials or with wrong ones', async () => {
    const before = { requests: server.stats.requests, authorized: server.stats.authorized };
    await expect(clone('anonymous', null)).rejects.toThrow(/could not read Username|Authentication failed/);
    await expect(clone('wrong', { username: 'x-access-token', password: 'not-the-password' })).rejects.toThrow(
      /Authentication failed/,
    );
    expect(server.stats.requests).toBeGreaterThan(before.requests);
    expect(server.stats.authorized).toBe(before.authorized);
    expect(server.stats.log.at(-1)?.status).toBe(401);
  });

  it('adds commits to a branch', async () => {
    const third = server.commit('infra', { 'main.tf': 'three\n' });
    await clone('third', { username: 'x-access-token', password: PASSWORD });
    expect(readFileSync(join(dir, 'third', 'main.tf'), 'utf8')).toBe('three\n');
    expect(third).not.toBe(shas[1]);
  });
});
