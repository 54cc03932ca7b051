import type { TrellisEvent, VineView } from '@trellis/core';
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
import { UNKNOWN_ID } from './helpers.js';

let core: TestCore;
let ada: TestUser;
let worker: TestWorker;
let vine: VineView;

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core);
  worker = await seedWorker(core, ada, { heartbeat: true });
  vine = await seedVine(core, ada);
  core.events.clear();
});

/** Records, for each event, what a listener reading committed state would have seen then. */
function watchCommittedState() {
  const seen: { event: TrellisEvent; jobStatus: string | undefined; chunkStored: boolean }[] = [];
  core.events.subscribe((event) => {
    const state = core.uow.snapshot();
    seen.push({
      event,
      jobStatus: state.jobs.get(event.job_id)?.status,
      chunkStored: event.type === 'log_appended' && state.logs.some((row) => row.chunk.id === event.chunk_id),
    });
  });
  return seen;
}

describe('events', () => {
  it('announce job_queued once the job is committed', async () => {
    const seen = watchCommittedState();
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect(seen).toEqual([
      { event: { type: 'job_queued', owner_id: ada.userId, job_id: job.id }, jobStatus: 'QUEUED', chunkStored: false },
    ]);
  });

  it('announce each status change after it is committed: claim, report, cancel', async () => {
    const seen = watchCommittedState();
    const job = await seedRunningJob(core, ada, worker, vine);
    await core.useCases.jobs.reportStatus(worker, job.id, { status: 'SUCCESS' });
    const queued = await core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id });
    await core.useCases.jobs.cancel(ada, queued.id);
    const changes = seen.filter((s) => s.event.type === 'job_status_changed');
    expect(changes.map((s) => [s.event.job_id, (s.event as { status: string }).status, s.jobStatus])).toEqual([
      [job.id, 'PROCESSING', 'PROCESSING'],
      [job.id, 'SUCCESS', 'SUCCESS'],
      [queued.id, 'CANCELLED', 'CANCELLED'],
    ]);
    for (const change of changes) expect(change.event.owner_id).toBe(ada.userId);
  });

  it('announce log_appended with the stored chunk id', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    const seen = watchCommittedState();
    const { id } = await core.useCases.logs.append(worker, job.id, { log_chunk: 'hello', stream_type: 'STDOUT' });
    expect(seen).toEqual([
      {
        event: { type: 'log_appended', owner_id: ada.userId, job_id: job.id, chunk_id: id },
        jobStatus: 'PROCESSING',
        chunkStored: true,
      },
    ]);
  });

  it('announce nothing for a metadata-only report, an empty claim or a failed use case', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    core.events.clear();
    await core.useCases.jobs.reportStatus(worker, job.id, { status: 'PROCESSING', execution_metadata: { a: 1 } });
    expect(await core.useCases.jobs.claim(worker)).toBeNull();
    await expect(core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: UNKNOWN_ID })).rejects.toThrow();
    await expect(core.useCases.jobs.reportStatus(worker, job.id, { status: 'QUEUED' })).rejects.toThrow();
    await expect(core.useCases.logs.append(worker, job.id, { log_chunk: 1, stream_type: 'STDOUT' })).rejects.toThrow();
    expect(core.events.published).toEqual([]);
  });

  it('a failing event bus fails no use case: the changes are committed', async () => {
    core.events.failing = true;
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect((await core.useCases.jobs.claim(worker))?.job.id).toBe(job.id);
    await core.useCases.logs.append(worker, job.id, { log_chunk: 'x', stream_type: 'STDOUT' });
    await core.useCases.jobs.reportStatus(worker, job.id, { status: 'SUCCESS' });
    const next = await core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id });
    await core.useCases.jobs.cancel(ada, next.id);
    const lost = await seedRunningJob(core, ada, worker, vine, 'DESTROY');
    core.clock.advance({ seconds: 121 });
    expect((await core.useCases.jobs.sweepLostJobs()).map((j) => j.id)).toEqual([lost.id]);
    const jobs = core.uow.snapshot().jobs;
    expect([jobs.get(job.id)?.status, jobs.get(next.id)?.status, jobs.get(lost.id)?.status]).toEqual([
      'SUCCESS',
      'CANCELLED',
      'FAILED',
    ]);
    expect(core.events.published).toEqual([]);
  });
});
