import { type TrellisClient, TrellisApiError } from '@trellis/client';
import { FakeClock } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import {
  type AgentClient,
  type RunningControlPlane,
  startControlPlane,
  vineyardWithConfiguration,
} from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

const KiB = 1024;
const METADATA_CAP = 600 * KiB;
const LOG_CAP = 4 * KiB;
const GRACE_MINUTES = 5;
const RETENTION_DAYS = 2;

async function failure(promise: Promise<unknown>): Promise<[number, string]> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TrellisApiError) return [error.status, error.code];
    throw error;
  }
  throw new Error('expected the request to fail');
}

describeEachDialect('caps and retention over HTTP', (dialect) => {
  let server: RunningControlPlane;
  const clock = new FakeClock(new Date());
  let users = 0;

  beforeAll(async () => {
    server = await startControlPlane(dialect, {
      clock,
      env: {
        TRELLIS_MAX_EXECUTION_METADATA_BYTES: String(METADATA_CAP),
        TRELLIS_MAX_LOG_BYTES_PER_JOB: String(LOG_CAP),
        TRELLIS_LOG_GRACE_MINUTES: String(GRACE_MINUTES),
        TRELLIS_LOG_RETENTION_DAYS: String(RETENTION_DAYS),
        TRELLIS_RETENTION_INTERVAL_S: '1',
        // The fake clock jumps days ahead; no agent here is meant to look lost.
        TRELLIS_HEARTBEAT_TIMEOUT_S: '86400',
        TRELLIS_LOST_JOB_TIMEOUT_S: '86400',
      },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function runningJob(): Promise<{ user: TrellisClient; agent: AgentClient; jobId: string }> {
    users += 1;
    const user = await server.userClient(`caps${users}@example.com`);
    const { configuration } = await vineyardWithConfiguration(user, `caps-${users}`);
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const agent = await server.agentClient(user, `caps-agent-${users}`);
    expect((await agent.claimJob())?.job.id).toBe(job.id);
    return { user, agent, jobId: job.id };
  }

  it('refuses a variable over 256 KiB, and values over 1 MiB together, naming the variable (400 validation_failed)', async () => {
    users += 1;
    const user = await server.userClient(`caps${users}@example.com`);
    const vineyard = await user.createVineyard(`caps-vars-${users}`);
    const create = (variables: Record<string, string | { value: string; sensitive: boolean }>) =>
      user.createConfiguration({
        name: `vars-${users}-${Object.keys(variables).length}`,
        vineyard_id: vineyard.id,
        source: { type: 'inline', files: { 'main.tf': '' } },
        variables,
      });
    const tooBig = await create({ small: 'ok', blob: { value: 'x'.repeat(300 * KiB), sensitive: true } }).catch(
      (error: unknown) => error,
    );
    expect(tooBig).toBeInstanceOf(TrellisApiError);
    expect((tooBig as TrellisApiError).status).toBe(400);
    expect((tooBig as TrellisApiError).errors).toEqual([
      { path: 'variables.blob', message: 'is 300 KiB; a value can be at most 256 KiB' },
    ]);
    const together = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((name) => [name, 'y'.repeat(250 * KiB)]));
    const sum = await create(together).catch((error: unknown) => error);
    expect((sum as TrellisApiError).errors).toEqual([
      { path: 'variables', message: "hold 1,250 KiB together; a configuration's values can be at most 1,024 KiB" },
    ]);
    // At the limit it is taken.
    expect((await create({ blob: 'z'.repeat(256 * KiB) })).variables.blob.value).toHaveLength(256 * KiB);
  });

  it('caps execution_metadata as merged across updates, not only per update (413 metadata_too_large)', async () => {
    const { agent, jobId } = await runningJob();
    const piece = 'x'.repeat(250 * KiB);
    await agent.reportStatus(jobId, { status: 'PROCESSING', execution_metadata: { a: piece } });
    await agent.reportStatus(jobId, { status: 'PROCESSING', execution_metadata: { b: piece } });
    expect(
      await failure(agent.reportStatus(jobId, { status: 'PROCESSING', execution_metadata: { c: piece } })),
    ).toEqual([413, 'metadata_too_large']);
    // Replacing a key does not grow the total, so it is still taken.
    await agent.reportStatus(jobId, { status: 'PROCESSING', execution_metadata: { a: 'small' } });
    const job = await agent.getJobForAgent(jobId);
    expect(Object.keys(job.execution_metadata).sort()).toEqual(['a', 'b']);
    expect(Buffer.byteLength(JSON.stringify(job.execution_metadata))).toBeLessThanOrEqual(METADATA_CAP);
  });

  it('cuts a job log at its cap with one SYSTEM line, then refuses further chunks (413 job_log_truncated)', async () => {
    const { user, agent, jobId } = await runningJob();
    const line = `${'y'.repeat(999)}\n`;
    for (let i = 0; i < 4; i += 1) await agent.appendLog(jobId, line, 'STDOUT');
    expect(await failure(agent.appendLog(jobId, line, 'STDOUT'))).toEqual([413, 'job_log_truncated']);
    expect(await failure(agent.appendLog(jobId, 'short\n', 'STDERR'))).toEqual([413, 'job_log_truncated']);
    const { logs } = await user.getJobLogs(jobId);
    expect(logs.map((log) => log.stream_type)).toEqual(['STDOUT', 'STDOUT', 'STDOUT', 'STDOUT', 'SYSTEM']);
    expect(logs.at(-1)?.log_chunk).toContain(`limit of ${LOG_CAP} bytes`);
    // The job itself runs on; only its log is closed.
    expect((await agent.reportStatus(jobId, { status: 'SUCCESS' })).status).toBe('SUCCESS');
  });

  it(`takes logs of a cancelled job for ${GRACE_MINUTES} minutes, then answers 409 job_log_closed`, async () => {
    const { user, agent, jobId } = await runningJob();
    await user.cancelJob(jobId);
    expect((await agent.appendLog(jobId, 'winding down\n', 'STDOUT')).job_status).toBe('CANCELLED');
    clock.advance({ minutes: GRACE_MINUTES - 1 });
    await agent.appendLog(jobId, 'still winding down\n', 'STDOUT');
    clock.advance({ minutes: 2 });
    expect(await failure(agent.appendLog(jobId, 'too late\n', 'STDOUT'))).toEqual([409, 'job_log_closed']);
    expect((await agent.readLogs(jobId)).logs.map((log) => log.log_chunk)).toEqual([
      'winding down\n',
      'still winding down\n',
    ]);
  });

  it(`deletes the logs of jobs finished more than ${RETENTION_DAYS} days ago, on its own timer`, async () => {
    const old = await runningJob();
    await old.agent.appendLog(old.jobId, 'old line\n', 'STDOUT');
    await old.agent.reportStatus(old.jobId, { status: 'SUCCESS' });
    clock.advance({ hours: 24 * RETENTION_DAYS - 1 });
    const recent = await runningJob();
    await recent.agent.appendLog(recent.jobId, 'recent line\n', 'STDOUT');
    await recent.agent.reportStatus(recent.jobId, { status: 'FAILED', error_message: 'boom' });
    const running = await runningJob();
    await running.agent.appendLog(running.jobId, 'running line\n', 'STDOUT');
    clock.advance({ hours: 2 });
    // The periodic task (every second here) does the deleting; this only waits to see it done.
    await vi.waitFor(async () => expect((await old.agent.readLogs(old.jobId)).logs).toEqual([]), {
      timeout: 30_000,
      interval: 200,
    });
    expect((await recent.agent.readLogs(recent.jobId)).logs.map((log) => log.log_chunk)).toEqual(['recent line\n']);
    expect((await running.agent.readLogs(running.jobId)).logs.map((log) => log.log_chunk)).toEqual(['running line\n']);
    expect((await old.agent.getJobForAgent(old.jobId)).status).toBe('SUCCESS');
  });
});
