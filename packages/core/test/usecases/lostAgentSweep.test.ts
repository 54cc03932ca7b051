import { ConflictError, type VineView } from '@trellis/core';
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

const heartbeat = (w: TestWorker) => core.useCases.workers.heartbeat(w, { version: '1.0.0' });

describe('the lost-agent sweep', () => {
  it('leaves a job alone for 120 s of silence', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    core.clock.advance({ seconds: 120 });
    expect(await core.useCases.jobs.sweepLostJobs()).toEqual([]);
    expect(core.uow.snapshot().jobs.get(job.id)?.status).toBe('PROCESSING');
  });

  it('fails the PROCESSING job of a worker silent for over 120 s, and its vine', async () => {
    const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    core.clock.advance({ seconds: 121 });
    const failed = await core.useCases.jobs.sweepLostJobs();
    expect(failed.map((j) => j.id)).toEqual([job.id]);
    const stored = core.uow.snapshot().jobs.get(job.id)!;
    expect(stored).toMatchObject({ status: 'FAILED', finished_at: core.clock.now().toISOString() });
    expect(stored.error_message).toMatch(/agent .*lost/i);
    expect(stored.error_message).toContain(worker.workerId);
    expect(core.uow.snapshot().vines.get(vine.id)).toMatchObject({
      status: 'FAILED',
      status_message: stored.error_message,
    });
    expect(core.events.ofType('job_status_changed').at(-1)).toEqual({
      type: 'job_status_changed',
      owner_id: ada.userId,
      job_id: job.id,
      status: 'FAILED',
    });
  });

  it('refuses later reports and logs from the lost worker with 409', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    core.clock.advance({ seconds: 121 });
    await core.useCases.jobs.sweepLostJobs();
    await heartbeat(worker);
    await expectFailure(
      core.useCases.jobs.reportStatus(worker, job.id, { status: 'SUCCESS' }),
      ConflictError,
      'invalid_transition',
    );
    await expectFailure(
      core.useCases.logs.append(worker, job.id, { log_chunk: 'still here', stream_type: 'STDOUT' }),
      ConflictError,
      'job_finished',
    );
  });

  it('leaves the job of a worker that keeps heartbeating', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    for (let i = 0; i < 10; i++) {
      core.clock.advance({ seconds: 30 });
      await heartbeat(worker);
      expect(await core.useCases.jobs.sweepLostJobs()).toEqual([]);
    }
    expect(core.uow.snapshot().jobs.get(job.id)?.status).toBe('PROCESSING');
  });

  it('spares a job whose worker heartbeats between the search for lost jobs and the failing', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    core.clock.advance({ seconds: 121 });
    let searched!: () => void;
    const searchDone = new Promise<void>((resolve) => {
      searched = resolve;
    });
    core.uow.wrapStores = (stores) => ({
      ...stores,
      jobs: Object.assign(Object.create(stores.jobs), {
        listLost: async (cutoff: string) => {
          const lost = await stores.jobs.listLost(cutoff);
          searched();
          return lost;
        },
      }),
    });
    const sweeping = core.useCases.jobs.sweepLostJobs();
    await searchDone;
    // The agent comes back now: its heartbeat commits before the sweep's next unit of work.
    const beat = heartbeat(worker);
    expect(await sweeping).toEqual([]);
    await beat;
    core.uow.wrapStores = undefined;
    expect(core.uow.snapshot().jobs.get(job.id)?.status).toBe('PROCESSING');
  });

  it('fails only the silent worker’s job, across owners, and never a queued one', async () => {
    const alive = await seedWorker(core, ada, { heartbeat: true });
    const lostJob = await seedRunningJob(core, ada, worker, vine);
    const otherVine = await seedVine(core, ada);
    const aliveJob = await seedRunningJob(core, ada, alive, otherVine);
    const queued = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    const bob = await seedUser(core);
    const bobsWorker = await seedWorker(core, bob, { heartbeat: true });
    const bobsJob = await seedRunningJob(core, bob, bobsWorker, await seedVine(core, bob));
    core.clock.advance({ seconds: 100 });
    await heartbeat(alive);
    core.clock.advance({ seconds: 30 });
    const failed = await core.useCases.jobs.sweepLostJobs();
    expect(failed.map((j) => j.id).sort()).toEqual([lostJob.id, bobsJob.id].sort());
    const jobs = core.uow.snapshot().jobs;
    expect(jobs.get(aliveJob.id)?.status).toBe('PROCESSING');
    expect(jobs.get(queued.id)?.status).toBe('QUEUED');
    expect(await core.useCases.jobs.sweepLostJobs()).toEqual([]);
  });

  it('frees the vine for its next job', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    const next = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    const fresh = await seedWorker(core, ada);
    core.clock.advance({ seconds: 121 });
    await core.useCases.jobs.sweepLostJobs();
    expect(core.uow.snapshot().jobs.get(job.id)?.status).toBe('FAILED');
    expect((await core.useCases.jobs.claim(fresh))?.job.id).toBe(next.id);
  });

  it('follows the configured lost-job timeout', async () => {
    core = createTestCore({ settings: { lostJobTimeoutSeconds: 300 } });
    ada = await seedUser(core);
    worker = await seedWorker(core, ada, { heartbeat: true });
    vine = await seedVine(core, ada);
    await seedRunningJob(core, ada, worker, vine);
    core.clock.advance({ seconds: 299 });
    expect(await core.useCases.jobs.sweepLostJobs()).toEqual([]);
    core.clock.advance({ seconds: 2 });
    expect(await core.useCases.jobs.sweepLostJobs()).toHaveLength(1);
  });
});
