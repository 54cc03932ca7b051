/**
 * The `trellis` CLI's follower (`jobs logs --follow`) against a real server whose stream ends it
 * for falling behind (issue 10, finding 1): the CLI reconnects after the last chunk it printed and
 * prints every chunk exactly once, then exits 0 at the job's end. The CLI falls behind the way it
 * would when suspended (Ctrl-Z) or starved: the test stops the process while the log grows.
 * And a follower refused for too many open streams waits and tries again.
 */
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LiveLogStats } from '@trellis/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane, vineyardWithConfiguration } from './support/controlPlane.js';

const TRELLIS_BIN = fileURLToPath(new URL('../../cli/dist/bin/trellis.js', import.meta.url));

async function until(server: RunningControlPlane, ready: (stats: LiveLogStats) => boolean): Promise<LiveLogStats> {
  for (let attempt = 0; attempt < 3000; attempt++) {
    const stats = server.controlPlane.logStreams.stats();
    if (ready(stats)) return stats;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`stream counters never got there: ${JSON.stringify(server.controlPlane.logStreams.stats())}`);
}

/** Runs `trellis jobs logs ID --follow` as the user; resolves with its exit code and output. */
async function followWithCli(server: RunningControlPlane, home: string, email: string, jobId: string) {
  const child = spawn(process.execPath, [TRELLIS_BIN, 'jobs', 'logs', jobId, '--follow'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      TRELLIS_SERVER: server.url,
      TRELLIS_TOKEN: await server.accessToken(email),
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (data) => {
    output.stdout += data;
  });
  child.stderr.setEncoding('utf8').on('data', (data) => {
    output.stderr += data;
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { child, output, exited };
}

async function runningJob(server: RunningControlPlane, email: string, name: string) {
  const user = await server.userClient(email);
  const { configuration } = await vineyardWithConfiguration(user, name);
  const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
  const agent = await server.agentClient(user, `${name}-agent`);
  expect((await agent.claimJob())?.job.id).toBe(job.id);
  return { job, agent };
}

describe('the CLI follower when the server refuses a stream for too many open ones', () => {
  let server: RunningControlPlane;
  let home: string;

  beforeAll(async () => {
    server = await startControlPlane('sqlite', { env: { TRELLIS_STREAMS_PER_JOB: '1' } });
    home = mkdtempSync(join(tmpdir(), 'trellis-cli-follow-'));
  });
  afterAll(async () => {
    await server?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('waits and follows once a stream is free', { timeout: 120_000 }, async () => {
    const email = 'busy@example.com';
    const { job, agent } = await runningJob(server, email, 'busy');
    // Another follower (a browser tab, say) holds the only stream of the job.
    const token = await server.accessToken(email);
    const held = httpRequest(`${server.url}/api/jobs/${job.id}/logs/stream`, {
      agent: false,
      headers: { authorization: `Bearer ${token}` },
    });
    held.on('error', () => {});
    held.end();
    const before = await until(server, (stats) => stats.live === 1);

    const cli = await followWithCli(server, home, email, job.id);
    await until(server, (stats) => stats.refused >= before.refused + 1);
    held.destroy();
    await agent.appendLog(job.id, 'hello\n', 'STDOUT');
    await agent.reportStatus(job.id, { status: 'SUCCESS' });
    expect(await cli.exited).toBe(0);
    expect(cli.output.stdout).toBe('hello\n');
  });
});

describe('the CLI follower when the server ends its stream for falling behind', () => {
  let server: RunningControlPlane;
  let home: string;

  beforeAll(async () => {
    server = await startControlPlane('sqlite');
    home = mkdtempSync(join(tmpdir(), 'trellis-cli-follow-'));
  });
  afterAll(async () => {
    await server?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('reconnects with the last chunk id and prints every chunk exactly once', { timeout: 120_000 }, async () => {
    const { job, agent } = await runningJob(server, 'follower@example.com', 'follow-slow');
    const before = server.controlPlane.logStreams.stats();
    const { child, output, exited } = await followWithCli(server, home, 'follower@example.com', job.id);
    await until(server, (stats) => stats.live === before.live + 1);
    // Suspended, the CLI reads nothing of its stream while the log grows.
    child.kill('SIGSTOP');

    const count = 40;
    const expected = Array.from({ length: count }, (_, i) => `chunk ${i} `.padEnd(768 * 1024 - 1, 'x').concat('\n'));
    for (const text of expected) await agent.appendLog(job.id, text, 'STDOUT');
    await agent.reportStatus(job.id, { status: 'SUCCESS' });
    try {
      await until(server, (stats) => stats.overflowed === before.overflowed + 1);
    } finally {
      child.kill('SIGCONT');
    }
    const code = await exited;
    expect(output.stderr).not.toMatch(/gave up/);
    expect(code).toBe(0);
    const stdout = output.stdout;
    // Compared by the chunks' names first, for a readable failure; then byte for byte.
    const names = (text: string) => [...text.matchAll(/chunk \d+ /g)].map((m) => m[0]);
    expect(names(stdout)).toEqual(names(expected.join('')));
    expect(stdout === expected.join('')).toBe(true);
    // The follower came back once after being ended (and only then got the end of the job).
    const after = await until(server, (stats) => stats.open === before.open);
    expect(after.followed).toBe(before.followed + 2);
  });
});
