import { type LogStreamEvent, type TrellisClient, TrellisApiError } from '@trellis/client';
import { MAX_LOG_BATCH_CHUNKS } from '@trellis/core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AgentClient,
  type RunningControlPlane,
  startControlPlane,
  vineyardWithConfiguration,
} from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

async function failure(promise: Promise<unknown>): Promise<[number, string]> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TrellisApiError) return [error.status, error.code];
    throw error;
  }
  throw new Error('expected the request to fail');
}

function lines(from: number, to: number) {
  const chunks = [];
  for (let seq = from; seq <= to; seq += 1) {
    chunks.push({
      seq,
      log_chunk: `line ${seq}\n`,
      stream_type: seq % 2 === 0 ? ('STDERR' as const) : ('STDOUT' as const),
    });
  }
  return chunks;
}

describeEachDialect('batched log ingest over HTTP', (dialect) => {
  let server: RunningControlPlane;
  let users = 0;

  beforeAll(async () => {
    server = await startControlPlane(dialect);
  });
  afterAll(async () => {
    await server?.close();
  });

  async function runningJob(): Promise<{ user: TrellisClient; agent: AgentClient; jobId: string }> {
    users += 1;
    const user = await server.userClient(`batch${users}@example.com`);
    const { configuration } = await vineyardWithConfiguration(user, `batch-${users}`);
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const agent = await server.agentClient(user, `batch-agent-${users}`);
    expect((await agent.claimJob())?.job.id).toBe(job.id);
    return { user, agent, jobId: job.id };
  }

  it('stores a batch in seq order, and a retried or overlapping batch only once', async () => {
    const { user, agent, jobId } = await runningJob();
    expect(await agent.appendLogBatch(jobId, lines(1, 3))).toEqual({
      last_seq: 3,
      stored: 3,
      job_status: 'PROCESSING',
    });
    expect(await agent.appendLogBatch(jobId, lines(1, 3))).toEqual({
      last_seq: 3,
      stored: 0,
      job_status: 'PROCESSING',
    });
    expect(await agent.appendLogBatch(jobId, lines(2, 5))).toEqual({
      last_seq: 5,
      stored: 2,
      job_status: 'PROCESSING',
    });
    // The single-chunk form of SPEC still works beside it.
    expect((await agent.appendLog(jobId, 'single\n', 'SYSTEM')).job_status).toBe('PROCESSING');
    const { logs } = await user.getJobLogs(jobId);
    expect(logs.map((log) => log.log_chunk)).toEqual([
      'line 1\n',
      'line 2\n',
      'line 3\n',
      'line 4\n',
      'line 5\n',
      'single\n',
    ]);
    expect(logs.map((log) => log.stream_type).slice(0, 2)).toEqual(['STDOUT', 'STDERR']);
  });

  it('refuses a batch past the next seq (409 log_seq_gap) and stores nothing of it', async () => {
    const { agent, jobId } = await runningJob();
    const gap = await agent.appendLogBatch(jobId, lines(3, 4)).catch((error: unknown) => error);
    expect(gap).toBeInstanceOf(TrellisApiError);
    expect([(gap as TrellisApiError).status, (gap as TrellisApiError).code]).toEqual([409, 'log_seq_gap']);
    // The seq to send first, for an agent whose earlier batches the control plane lost.
    expect((gap as TrellisApiError).extensions).toMatchObject({ expected_seq: 1 });
    await agent.appendLogBatch(jobId, lines(1, 2));
    expect(await agent.appendLogBatch(jobId, lines(3, 4))).toMatchObject({ last_seq: 4, stored: 2 });
    expect((await agent.readLogs(jobId)).logs.map((log) => log.log_chunk)).toEqual(lines(1, 4).map((c) => c.log_chunk));
  });

  it('refuses malformed and oversized batches with stable codes', async () => {
    const { agent, jobId } = await runningJob();
    const gap = [...lines(1, 1), ...lines(3, 3)];
    expect(await failure(agent.appendLogBatch(jobId, gap))).toEqual([400, 'validation_failed']);
    expect(await failure(agent.appendLogBatch(jobId, []))).toEqual([400, 'validation_failed']);
    expect(await failure(agent.appendLogBatch(jobId, lines(0, 1)))).toEqual([400, 'validation_failed']);
    const tooMany = await agent.appendLogBatch(jobId, lines(1, MAX_LOG_BATCH_CHUNKS + 1)).catch((error) => error);
    expect(tooMany).toBeInstanceOf(TrellisApiError);
    expect([tooMany.status, tooMany.code, tooMany.errors]).toEqual([
      400,
      'validation_failed',
      [{ path: 'chunks', message: `must hold at most ${MAX_LOG_BATCH_CHUNKS} chunks` }],
    ]);
    const mib = 'x'.repeat(1024 * 1024);
    const heavy = [1, 2, 3, 4, 5].map((seq) => ({ seq, log_chunk: mib, stream_type: 'STDOUT' as const }));
    expect(await failure(agent.appendLogBatch(jobId, heavy))).toEqual([413, 'log_batch_too_large']);
    expect((await agent.readLogs(jobId)).logs).toEqual([]);
  });

  it('gives a live-log reader every chunk of concurrent batches, in seq order', async () => {
    const { user, agent, jobId } = await runningJob();
    const received = (async () => {
      const texts: string[] = [];
      for await (const event of user.streamJobLogs(jobId) as AsyncGenerator<LogStreamEvent>) {
        if (event.type === 'log') texts.push(event.chunk.log_chunk);
      }
      return texts;
    })();
    // Six batches in flight at once (the agent keeps 3): one that overtakes the one before
    // it is refused (log_seq_gap) and posted again once that one is stored.
    const post = async (from: number, previous: Promise<unknown> | null): Promise<unknown> => {
      try {
        return await agent.appendLogBatch(jobId, lines(from, from + 9));
      } catch (error) {
        if (!(error instanceof TrellisApiError && error.code === 'log_seq_gap') || !previous) throw error;
        await previous;
        return agent.appendLogBatch(jobId, lines(from, from + 9));
      }
    };
    let previous: Promise<unknown> | null = null;
    const posts: Promise<unknown>[] = [];
    for (let from = 1; from <= 60; from += 10) {
      previous = post(from, previous);
      posts.push(previous);
    }
    await Promise.all(posts);
    await agent.reportStatus(jobId, { status: 'SUCCESS' });
    expect(await received).toEqual(lines(1, 60).map((chunk) => chunk.log_chunk));
  });
});
