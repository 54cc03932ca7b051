/**
 * `plan`, `deploy`, `destroy`, `jobs wait` and `jobs logs --follow` following jobs live, with the
 * test acting as the agent over HTTP: exit codes per final status, the three log streams told
 * apart, reconnection after the server restarts, and Ctrl-C on a pipe.
 */
import type { TrellisClient } from '@trellis/client';
import type { Job } from '@trellis/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fakeAgent, login, RunningTrellis, runTrellis, TempHome, TestServer, userClient } from './harness.js';

let server: TestServer;
let home: TempHome;
let agent: TrellisClient;

beforeAll(async () => {
  server = await new TestServer().start();
  home = new TempHome();
  await login(server, home);
  agent = await fakeAgent(server, home);
  const user = userClient(server, home);
  const vineyard = await user.createVineyard('follow');
  for (const name of ['web', 'db']) {
    await user.createConfiguration({
      name,
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': '' } },
    });
  }
});
afterAll(async () => {
  await server?.destroy();
  home?.remove();
});
afterEach(async () => {
  // Leave no job running or queued, so the next test's agent claims the job it expects.
  const user = userClient(server, home);
  for (const job of await user.listJobs()) {
    if (job.status === 'QUEUED' || job.status === 'PROCESSING') await user.cancelJob(job.id);
  }
});

/** Claims the next job as the agent (long-polling for it). */
async function claim(): Promise<string> {
  const claimed = await agent.claimJob({ wait: 10 });
  if (!claimed) throw new Error('no job to claim');
  return claimed.job.id;
}

describe('plan follows its job', () => {
  it('prints the log live and exits 0 when the job succeeds', async () => {
    const run = new RunningTrellis(['plan', 'web'], home.env());
    await run.waitFor(/Plan job [0-9a-f-]{36} is queued; waiting for an agent to pick it up/);
    const id = await claim();
    await agent.appendLog(id, 'Initializing the backend...\nPlan: 1 to add', 'STDOUT');
    await agent.appendLog(id, ', 0 to change.\n', 'STDOUT');
    await agent.appendLog(id, 'Warning: provider is old\n', 'STDERR');
    await agent.appendLog(id, 'uploading the plan\n', 'SYSTEM');
    // Lines arrive while the job is still running, not only at its end.
    await run.waitFor(/system\| uploading the plan/);
    expect(run.stdout).toContain('Plan: 1 to add, 0 to change.');
    await agent.reportStatus(id, { status: 'SUCCESS' });
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      'Initializing the backend...\nPlan: 1 to add, 0 to change.\nstderr| Warning: provider is old\nsystem| uploading the plan\n',
    );
    expect(result.stderr).toContain(`Queued PLAN job ${id} for web.`);
    expect(result.stderr).toMatch(new RegExp(`✓ Plan succeeded \\(job ${id}, \\S+\\)`));
  });

  it('exits 1 with the error when the job fails', async () => {
    const run = new RunningTrellis(['plan', 'web'], home.env());
    await run.waitFor(/is queued/);
    const id = await claim();
    await agent.appendLog(id, 'Error: Invalid provider configuration\n', 'STDERR');
    await agent.reportStatus(id, { status: 'FAILED', error_message: 'tofu plan exited with status 1' });
    const result = await run.done;
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('stderr| Error: Invalid provider configuration\n');
    expect(result.stderr).toMatch(new RegExp(`✗ Plan failed: tofu plan exited with status 1 \\(job ${id}, `));
  });

  it('exits 5 when the job is cancelled while it is followed', async () => {
    const run = new RunningTrellis(['deploy', 'web'], home.env());
    await run.waitFor(/Deploy job [0-9a-f-]{36} is queued/);
    const id = await claim();
    await agent.appendLog(id, 'Applying...\n', 'STDOUT');
    await run.waitFor(/Applying/);
    const cancel = await runTrellis(['jobs', 'cancel', id], { env: home.env() });
    expect(cancel.code).toBe(0);
    const result = await run.done;
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(new RegExp(`! Deploy was CANCELLED \\(job ${id}, `));
  });

  it('with --json prints the finished job on stdout and the log on stderr', async () => {
    const run = new RunningTrellis(['destroy', 'db', '--yes', '--json'], home.env());
    await run.waitFor(/Destroy job [0-9a-f-]{36} is queued/);
    const id = await claim();
    await agent.appendLog(id, 'Destroy complete! Resources: 3 destroyed.\n', 'STDOUT');
    await agent.reportStatus(id, { status: 'SUCCESS' });
    const result = await run.done;
    expect(result.code).toBe(0);
    const job = JSON.parse(result.stdout) as Job;
    expect(job).toMatchObject({ id, job_type: 'DESTROY', status: 'SUCCESS' });
    expect(result.stderr).toContain('Destroy complete! Resources: 3 destroyed.');
  });

  it('stops following on Ctrl-C when not at a terminal (exit 130) and leaves the job alone', async () => {
    const run = new RunningTrellis(['plan', 'web'], home.env());
    const [, id] = await run.waitFor(/Plan job ([0-9a-f-]{36}) is queued/);
    run.child.kill('SIGINT');
    const result = await run.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain(
      `Error: stopped following; job ${id} goes on (\`trellis jobs cancel ${id}\` cancels it)`,
    );
    expect((await userClient(server, home).getJob(id as string)).status).toBe('QUEUED');
  });

  it('resumes after the last line when the control plane dies and comes back mid-job', async () => {
    const run = new RunningTrellis(['plan', 'web'], home.env());
    await run.waitFor(/is queued/);
    const id = await claim();
    await agent.appendLog(id, 'before the restart\n', 'STDOUT');
    await run.waitFor(/before the restart/);
    const port = Number(new URL(server.url).port);
    // Killed, not stopped: the stream drops mid-job, as when a server crashes or a proxy cuts it.
    await server.stop('SIGKILL');
    await server.start(port);
    await agent.appendLog(id, 'after the restart\n', 'STDOUT');
    await agent.reportStatus(id, { status: 'SUCCESS' });
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('before the restart\nafter the restart\n');
  });
});

describe('jobs wait and jobs logs --follow', () => {
  it('wait exits with the code of the final status, whether the job ends before or during the wait', async () => {
    const detached = await runTrellis(['plan', 'web', '--detach'], { env: home.env() });
    expect(detached.code).toBe(0);
    const id = detached.stdout.trim();
    const waiting = new RunningTrellis(['jobs', 'wait', id], home.env());
    await waiting.waitFor(/is queued/);
    expect(await claim()).toBe(id);
    await agent.appendLog(id, 'not shown by wait\n', 'STDOUT');
    await agent.reportStatus(id, { status: 'FAILED', error_message: 'boom' });
    const result = await waiting.done;
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('✗ Plan failed: boom');

    const again = await runTrellis(['jobs', 'wait', id, '--json'], { env: home.env() });
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ id, status: 'FAILED', error_message: 'boom' });
  });

  it('logs --follow prints the backlog and new lines until the end; with --json one chunk per line', async () => {
    const id = (await runTrellis(['plan', 'web', '--detach'], { env: home.env() })).stdout.trim();
    expect(await claim()).toBe(id);
    await agent.appendLog(id, 'first\n', 'STDOUT');
    const text = new RunningTrellis(['jobs', 'logs', id, '--follow'], home.env());
    const json = new RunningTrellis(['jobs', 'logs', id, '--follow', '--json'], home.env());
    await text.waitFor(/first/);
    await json.waitFor(/first/);
    await agent.appendLog(id, 'second\n', 'STDERR');
    await agent.reportStatus(id, { status: 'SUCCESS' });
    const [textResult, jsonResult] = await Promise.all([text.done, json.done]);
    expect(textResult.code).toBe(0);
    expect(textResult.stdout).toBe('first\nstderr| second\n');
    expect(jsonResult.code).toBe(0);
    const chunks = jsonResult.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(chunks.map((chunk) => [chunk.log_chunk, chunk.stream_type])).toEqual([
      ['first\n', 'STDOUT'],
      ['second\n', 'STDERR'],
    ]);
  });
});
