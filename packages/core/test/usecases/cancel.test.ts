import { ConflictError, NotFoundError, ValidationError, type VineView } from '@trellis/core';
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

const vineStatus = () => core.uow.snapshot().vines.get(vine.id)!.status;
const heartbeat = (w: TestWorker = worker) => core.useCases.workers.heartbeat(w, { version: '1.0.0' });

describe('cancelling a job', () => {
  it('cancels a QUEUED job at once; it is never claimed and the vine is untouched', async () => {
    const job = await core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id });
    const cancelled = await core.useCases.jobs.cancel(ada, job.id);
    expect(cancelled).toMatchObject({
      status: 'CANCELLED',
      finished_at: core.clock.now().toISOString(),
      error_message: 'cancelled by user',
    });
    expect(await core.useCases.jobs.claim(worker)).toBeNull();
    expect(vineStatus()).toBe('NEW');
  });

  it('cancels a PROCESSING job and restores the vine to its status before the job', async () => {
    const plan = await seedRunningJob(core, ada, worker, vine, 'PLAN');
    await core.useCases.jobs.reportStatus(worker, plan.id, { status: 'SUCCESS' });
    const deploy = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    expect(vineStatus()).toBe('DEPLOYING');
    const cancelled = await core.useCases.jobs.cancel(ada, deploy.id);
    expect(cancelled.status).toBe('CANCELLED');
    expect(vineStatus()).toBe('PLANNED');
    expect(core.uow.snapshot().vines.get(vine.id)!.status_message).toBeNull();
  });

  it('frees the vine for its next job', async () => {
    const first = await seedRunningJob(core, ada, worker, vine, 'PLAN');
    const next = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    const other = await seedWorker(core, ada);
    expect(await core.useCases.jobs.claim(other)).toBeNull();
    await core.useCases.jobs.cancel(ada, first.id);
    expect((await core.useCases.jobs.claim(other))?.job.id).toBe(next.id);
  });

  it.each(['SUCCESS', 'FAILED'])('409s a %s job', async (status) => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await core.useCases.jobs.reportStatus(worker, job.id, { status });
    await expectFailure(core.useCases.jobs.cancel(ada, job.id), ConflictError, 'invalid_transition');
    expect(core.uow.snapshot().jobs.get(job.id)?.status).toBe(status);
  });

  it('409s a job cancelled already', async () => {
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    await core.useCases.jobs.cancel(ada, job.id);
    await expectFailure(core.useCases.jobs.cancel(ada, job.id), ConflictError, 'invalid_transition');
  });

  it("404s another owner's job and 400s a malformed id", async () => {
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    const bob = await seedUser(core);
    await expectFailure(core.useCases.jobs.cancel(bob, job.id), NotFoundError, 'job_not_found');
    await expectFailure(core.useCases.jobs.cancel(ada, 'x'), ValidationError);
    expect(core.uow.snapshot().jobs.get(job.id)?.status).toBe('QUEUED');
  });

  it('tells the claiming agent in its heartbeat answers, for the notice period only', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    const other = await seedWorker(core, ada, { heartbeat: true });
    expect((await heartbeat()).cancel_job_ids).toEqual([]);
    await core.useCases.jobs.cancel(ada, job.id);
    expect(await heartbeat()).toEqual({ cancel_job_ids: [job.id], heartbeat_interval_s: 30, lost_job_timeout_s: 120 });
    expect((await heartbeat(other)).cancel_job_ids).toEqual([]);
    core.clock.advance({ seconds: core.settings.cancelNoticeSeconds });
    expect((await heartbeat()).cancel_job_ids).toEqual([job.id]);
    core.clock.advance(1);
    expect((await heartbeat()).cancel_job_ids).toEqual([]);
  });

  it('still takes the agent’s logs after a cancel, and tells it the job is CANCELLED', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await core.useCases.jobs.cancel(ada, job.id);
    const answer = await core.useCases.logs.append(worker, job.id, {
      log_chunk: 'Interrupt received',
      stream_type: 'STDERR',
    });
    expect(answer.job_status).toBe('CANCELLED');
  });

  it('refuses the agent’s later status reports with 409', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await core.useCases.jobs.cancel(ada, job.id);
    await expectFailure(
      core.useCases.jobs.reportStatus(worker, job.id, { status: 'SUCCESS' }),
      ConflictError,
      'invalid_transition',
    );
  });
});
