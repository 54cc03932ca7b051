import {
  ConflictError,
  DEFAULT_LOG_PAGE,
  ForbiddenError,
  MAX_LOG_CHUNK_BYTES,
  MAX_LOG_PAGE,
  NotFoundError,
  ownerScope,
  TooLargeError,
  ValidationError,
  type VineView,
} from '@trellis/core';
import {
  createTestCore,
  seedRunningJob,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  type TestWorker,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from './helpers.js';

let core: TestCore;
let ada: TestUser;
let worker: TestWorker;
let vine: VineView;

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core);
  worker = await seedWorker(core, ada, { heartbeat: true });
  vine = await seedVine(core, ada);
});

const append = (jobId: string, log_chunk: unknown, stream_type: unknown = 'STDOUT', by: TestWorker = worker) =>
  core.useCases.logs.append(by, jobId, { log_chunk, stream_type });

describe('appending logs', () => {
  it('stores chunks with increasing ids and answers the job status', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    const first = await append(job.id, 'Initializing...\n');
    const second = await append(job.id, 'warning\n', 'STDERR');
    const third = await append(job.id, 'agent: done\n', 'SYSTEM');
    expect(first.job_status).toBe('PROCESSING');
    expect(second.id).toBeGreaterThan(first.id);
    expect(third.id).toBeGreaterThan(second.id);
    const page = await core.useCases.logs.read(ada.userId, job.id);
    expect(page).toEqual({
      logs: [
        {
          id: first.id,
          job_id: job.id,
          log_chunk: 'Initializing...\n',
          stream_type: 'STDOUT',
          created_at: expect.any(String),
        },
        {
          id: second.id,
          job_id: job.id,
          log_chunk: 'warning\n',
          stream_type: 'STDERR',
          created_at: expect.any(String),
        },
        {
          id: third.id,
          job_id: job.id,
          log_chunk: 'agent: done\n',
          stream_type: 'SYSTEM',
          created_at: expect.any(String),
        },
      ],
      has_more: false,
    });
  });

  it('accepts logs only from the worker that claimed the job (403)', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    const other = await seedWorker(core, ada);
    await expectFailure(append(job.id, 'x', 'STDOUT', other), ForbiddenError, 'job_not_claimed_by_worker');
    const queued = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    await expectFailure(append(queued.id, 'x'), ForbiddenError, 'job_not_claimed_by_worker');
    expect((await core.useCases.logs.read(ada.userId, job.id)).logs).toEqual([]);
  });

  it('404s a job of another owner', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    const bob = await seedUser(core);
    const bobsWorker = await seedWorker(core, bob);
    await expectFailure(append(job.id, 'x', 'STDOUT', bobsWorker), NotFoundError, 'job_not_found');
  });

  it.each(['SUCCESS', 'FAILED'])('409 job_finished after %s', async (status) => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await core.useCases.jobs.reportStatus(worker, job.id, { status });
    await expectFailure(append(job.id, 'late'), ConflictError, 'job_finished');
  });

  it('takes chunks up to 1 MiB, counted in bytes', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    expect(MAX_LOG_CHUNK_BYTES).toBe(1024 * 1024);
    await expect(append(job.id, 'x'.repeat(MAX_LOG_CHUNK_BYTES))).resolves.toBeTruthy();
    const error = await expectFailure(append(job.id, 'x'.repeat(MAX_LOG_CHUNK_BYTES + 1)), TooLargeError);
    expect(error.limitBytes).toBe(MAX_LOG_CHUNK_BYTES);
    // 'é' is two bytes in UTF-8: fewer characters than the limit, more bytes.
    await expectFailure(append(job.id, 'é'.repeat(MAX_LOG_CHUNK_BYTES / 2 + 1)), TooLargeError);
    expect((await core.useCases.logs.read(ada.userId, job.id)).logs).toHaveLength(1);
  });

  it('refuses a chunk that is not a string and an unknown stream type', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await expectFailure(append(job.id, 42), ValidationError);
    await expectFailure(append(job.id, undefined), ValidationError);
    await expectFailure(append(job.id, 'x', 'stdout'), ValidationError);
    await expectFailure(append(job.id, 'x', 'DEBUG'), ValidationError);
    await expectFailure(append('not-a-uuid', 'x'), ValidationError);
  });

  it('accepts an empty chunk', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await expect(append(job.id, '')).resolves.toMatchObject({ job_status: 'PROCESSING' });
  });
});

describe('reading logs', () => {
  async function jobWithChunks(count: number) {
    const job = await seedRunningJob(core, ada, worker, vine);
    const ids = await core.uow.run(ownerScope(ada.userId), async (stores) => {
      const out: number[] = [];
      for (let i = 0; i < count; i++) {
        out.push(
          (await stores.logs.append(ada.userId, job.id, `line ${i}\n`, 'STDOUT', core.clock.now().toISOString())).id,
        );
      }
      return out;
    });
    return { job, ids };
  }

  it('pages with after, limit and has_more', async () => {
    const { job, ids } = await jobWithChunks(5);
    const read = (query: { after?: unknown; limit?: unknown }) => core.useCases.logs.read(ada.userId, job.id, query);
    const texts = (page: { logs: { log_chunk: string }[] }) => page.logs.map((chunk) => chunk.log_chunk.trim());
    const first = await read({ limit: 2 });
    expect(texts(first)).toEqual(['line 0', 'line 1']);
    expect(first.has_more).toBe(true);
    const second = await read({ after: first.logs[1]!.id, limit: 2 });
    expect(texts(second)).toEqual(['line 2', 'line 3']);
    expect(second.has_more).toBe(true);
    const last = await read({ after: String(second.logs[1]!.id), limit: '2' });
    expect(texts(last)).toEqual(['line 4']);
    expect(last.has_more).toBe(false);
    expect(await read({ after: ids[4] })).toEqual({ logs: [], has_more: false });
    expect(texts(await read({ limit: 5 }))).toHaveLength(5);
    expect((await read({ limit: 5 })).has_more).toBe(false);
  });

  it(`returns ${DEFAULT_LOG_PAGE} chunks by default and at most ${MAX_LOG_PAGE}`, async () => {
    expect(DEFAULT_LOG_PAGE).toBe(1000);
    expect(MAX_LOG_PAGE).toBe(5000);
    const { job } = await jobWithChunks(1001);
    const page = await core.useCases.logs.read(ada.userId, job.id);
    expect(page.logs).toHaveLength(1000);
    expect(page.has_more).toBe(true);
    expect((await core.useCases.logs.read(ada.userId, job.id, { limit: 5000 })).logs).toHaveLength(1001);
  });

  it.each([
    [{ limit: 0 }, 'limit'],
    [{ limit: 5001 }, 'limit'],
    [{ limit: -1 }, 'limit'],
    [{ limit: 1.5 }, 'limit'],
    [{ limit: 'ten' }, 'limit'],
    [{ after: -1 }, 'after'],
    [{ after: '1e3' }, 'after'],
    [{ after: 'abc' }, 'after'],
    [{ after: {} }, 'after'],
  ])('refuses %j', async (query, path) => {
    const { job } = await jobWithChunks(1);
    const error = await expectFailure(core.useCases.logs.read(ada.userId, job.id, query), ValidationError);
    expect(error.fields[0]?.path).toBe(path);
  });

  it('404s a job of another owner, even with its id', async () => {
    const { job } = await jobWithChunks(1);
    const bob = await seedUser(core);
    await expectFailure(core.useCases.logs.read(bob.userId, job.id), NotFoundError, 'job_not_found');
  });

  it('keeps the chunks of each job apart', async () => {
    const { job } = await jobWithChunks(2);
    const otherVine = await seedVine(core, ada);
    const other = await seedRunningJob(core, ada, worker, otherVine);
    await append(other.id, 'other job');
    expect((await core.useCases.logs.read(ada.userId, job.id)).logs).toHaveLength(2);
    expect((await core.useCases.logs.read(ada.userId, other.id)).logs.map((c) => c.log_chunk)).toEqual(['other job']);
  });
});

describe('log caps and retention', () => {
  it('cuts the log at the per-job cap: one SYSTEM line, then 413 job_log_truncated for every chunk', async () => {
    core = createTestCore({ settings: { maxLogBytesPerJob: 2048 } });
    ada = await seedUser(core);
    worker = await seedWorker(core, ada, { heartbeat: true });
    vine = await seedVine(core, ada);
    const job = await seedRunningJob(core, ada, worker, vine);
    await append(job.id, 'é'.repeat(512));
    await append(job.id, 'x'.repeat(1024));
    await expectFailure(append(job.id, 'y'), TooLargeError, 'job_log_truncated');
    await expectFailure(append(job.id, 'z', 'STDERR'), TooLargeError, 'job_log_truncated');
    const { logs } = await core.useCases.logs.read(ada.userId, job.id);
    expect(logs.map((log) => log.stream_type)).toEqual(['STDOUT', 'STDOUT', 'SYSTEM']);
    expect(logs[2]?.log_chunk).toMatch(/cut.*2048 bytes/);
    expect(core.events.published.filter((event) => event.type === 'log_appended')).toHaveLength(3);
  });

  it('stores a batch up to the cap, ends it with the SYSTEM line, and announces the batch once', async () => {
    core = createTestCore({ settings: { maxLogBytesPerJob: 2048 } });
    ada = await seedUser(core);
    worker = await seedWorker(core, ada, { heartbeat: true });
    vine = await seedVine(core, ada);
    const job = await seedRunningJob(core, ada, worker, vine);
    const chunks = [1, 2, 3].map((seq) => ({ seq, log_chunk: String(seq).repeat(800), stream_type: 'STDOUT' }));
    await expectFailure(core.useCases.logs.appendBatch(worker, job.id, { chunks }), TooLargeError, 'job_log_truncated');
    const { logs } = await core.useCases.logs.read(ada.userId, job.id);
    expect(logs.map((log) => [log.stream_type, log.log_chunk.slice(0, 1)])).toEqual([
      ['STDOUT', '1'],
      ['STDOUT', '2'],
      ['SYSTEM', '['],
    ]);
    expect(core.events.published.filter((event) => event.type === 'log_appended')).toHaveLength(1);
    // Retried after the cut: refused the same way, nothing more stored.
    await expectFailure(core.useCases.logs.appendBatch(worker, job.id, { chunks }), TooLargeError, 'job_log_truncated');
    expect((await core.useCases.logs.read(ada.userId, job.id)).logs).toHaveLength(3);
  });

  it('takes chunks of a cancelled job during the grace minutes only (409 job_log_closed after)', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await core.useCases.jobs.cancel(ada, job.id);
    core.clock.advance({ minutes: core.settings.logGraceMinutes });
    expect((await append(job.id, 'last words')).job_status).toBe('CANCELLED');
    core.clock.advance({ seconds: 1 });
    await expectFailure(append(job.id, 'too late'), ConflictError, 'job_log_closed');
  });

  it('deletes the logs of jobs finished before the retention, in batches, and none with retention 0', async () => {
    const old = await seedRunningJob(core, ada, worker, vine);
    for (let i = 0; i < 3; i += 1) await append(old.id, `old ${i}`);
    await core.useCases.jobs.reportStatus(worker, old.id, { status: 'SUCCESS' });
    core.clock.advance({ hours: 24 * core.settings.logRetentionDays + 1 });
    const other = await seedWorker(core, ada, { heartbeat: true });
    const running = await seedRunningJob(core, ada, other, await seedVine(core, ada));
    await append(running.id, 'running', 'STDOUT', other);
    expect(await core.useCases.logs.deleteExpired()).toBe(3);
    expect((await core.useCases.logs.read(ada.userId, old.id)).logs).toEqual([]);
    expect((await core.useCases.logs.read(ada.userId, running.id)).logs).toHaveLength(1);

    const keepForever = createTestCore({ settings: { logRetentionDays: 0 } });
    expect(await keepForever.useCases.logs.deleteExpired()).toBe(0);
  });
});
