import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Backoff, type TrellisClient, TrellisConnectionError } from '@trellis/client';
import {
  type AgentClient,
  type RunningControlPlane,
  startControlPlane,
  vineyardWithConfiguration,
} from '@trellis/testkit/controlPlane';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentLogger } from '../../src/logging/AgentLogger.js';
import { type LogApi, LogShipper } from '../../src/logs/LogShipper.js';

const quiet = new AgentLogger('silent');

/** The whole log of a job as its owner reads it, page after page. */
async function readAll(user: TrellisClient, jobId: string): Promise<string> {
  let text = '';
  let after = 0;
  for (;;) {
    const page = await user.getJobLogs(jobId, { after, limit: 5000 });
    for (const log of page.logs) text += log.log_chunk;
    if (!page.has_more) return text;
    after = page.logs.at(-1)?.id ?? after;
  }
}

describe('the agent ships a job log to a real control plane in batches', () => {
  let server: RunningControlPlane;
  let user: TrellisClient;
  let dir: string;
  let jobs = 0;

  beforeAll(async () => {
    server = await startControlPlane('sqlite');
    user = await server.userClient('shipping@example.com');
    dir = mkdtempSync(join(tmpdir(), 'trellis-log-spool-'));
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function runningJob(): Promise<{ agent: AgentClient; jobId: string }> {
    jobs += 1;
    const { configuration } = await vineyardWithConfiguration(user, `shipping-${jobs}`);
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const agent = await server.agentClient(user, `shipping-agent-${jobs}`);
    expect((await agent.claimJob())?.job.id).toBe(job.id);
    return { agent, jobId: job.id };
  }

  it('stores a batch once when the answer to a post that landed was lost, and posts it again with the same seqs', async () => {
    const { agent, jobId } = await runningJob();
    let lose = 1;
    const api: LogApi = {
      async appendLogBatch(id, chunks) {
        const answer = await agent.appendLogBatch(id, chunks);
        if (lose-- > 0) throw new TrellisConnectionError(server.url, new Error('ECONNRESET'));
        return answer;
      },
    };
    const ship = new LogShipper({ api, jobId, logger: quiet, backoff: new Backoff({ initialMs: 1, maxMs: 2 }) });
    ship.append('STDOUT', 'line 1\nline 2\n');
    ship.append('STDERR', 'Error: boom\n');
    await ship.close();
    expect(await readAll(user, jobId)).toBe('line 1\nline 2\nError: boom\n');
    expect((await user.getJobLogs(jobId)).logs.map((log) => log.stream_type)).toEqual(['STDOUT', 'STDERR']);
    expect([ship.stats.retries, ship.stats.duplicatesAvoided]).toEqual([1, 1]);
  });

  it('spools to a file while the server is slow, keeps memory bounded, and delivers everything in order', async () => {
    const { agent, jobId } = await runningJob();
    // The server answers nothing until the engine has written everything: a control plane far
    // slower than the engine.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let posts = 0;
    const api: LogApi = {
      async appendLogBatch(id, chunks) {
        posts += 1;
        await gate;
        return agent.appendLogBatch(id, chunks);
      },
    };
    const limits = { highWaterBytes: 256 * 1024, maxBatchBytes: 64 * 1024, maxChunkBytes: 16 * 1024, maxInFlight: 4 };
    const spoolPath = join(dir, 'log-spool-slow');
    const ship = new LogShipper({ api, jobId, logger: quiet, spoolPath, ...limits });
    let expected = '';
    for (let i = 0; i < 40_000; i += 1) {
      const line = `${i % 3 === 0 ? 'stderr' : 'stdout'} line ${i} ${'·'.repeat(i % 50)}\n`;
      ship.append(i % 3 === 0 ? 'STDERR' : 'STDOUT', line);
      expected += line;
      expect(ship.full).toBe(false); // with a spool, the engine is never held back
    }
    expect(posts).toBe(limits.maxInFlight);
    expect(existsSync(spoolPath)).toBe(true);
    open();
    await ship.close();

    expect(Buffer.byteLength(expected)).toBeGreaterThan(4 * limits.highWaterBytes);
    expect(await readAll(user, jobId)).toBe(expected);
    expect(ship.stats.spooledBytes).toBeGreaterThan(Buffer.byteLength(expected) / 2);
    const bound = limits.highWaterBytes + limits.maxInFlight * limits.maxBatchBytes + limits.maxChunkBytes;
    expect(ship.stats.peakMemoryBytes).toBeLessThanOrEqual(bound);
    expect(ship.pendingBytes).toBe(0);
    expect(existsSync(spoolPath)).toBe(false);
  });
});
