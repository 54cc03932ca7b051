import { systemScope, type VineView } from '@trellis/core';
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

/** The external id of an assumed-role identity (undefined for any other kind). */
const externalIdOf = (identity: { kind: string; external_id?: string } | null | undefined) =>
  identity?.kind === 'assume_role' ? identity.external_id : undefined;

let core: TestCore;
let ada: TestUser;
let worker: TestWorker;
let vine: VineView;
const ROLE = 'arn:aws:iam::123456789012:role/deployer';

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core);
  worker = await seedWorker(core, ada, { heartbeat: true });
  vine = await seedVine(core, ada, {
    variables: { secret: { value: 'hunter2', sensitive: true } },
    cloud_identity: { role_arn: ROLE },
  });
});

const queue = (jobType: string, configurationId: string = vine.id, extra: Record<string, unknown> = {}) =>
  core.useCases.jobs.create(ada, { job_type: jobType, configuration_id: configurationId, ...extra });
const vineStatus = (id: string = vine.id) => core.uow.snapshot().vines.get(id)!.status;

describe('claiming a job', () => {
  it('answers null when nothing is queued', async () => {
    expect(await core.useCases.jobs.claim(worker)).toBeNull();
  });

  it('hands the agent the job, unredacted, and the cloud identity to assume', async () => {
    const job = await queue('PLAN');
    core.clock.advance({ seconds: 5 });
    const claimed = await core.useCases.jobs.claim(worker);
    expect(claimed?.job).toMatchObject({
      id: job.id,
      status: 'PROCESSING',
      claimed_by_worker_id: worker.workerId,
      claimed_at: core.clock.now().toISOString(),
      vine_status_before: 'NEW',
    });
    expect(claimed?.job.config_snapshot.variables.secret?.value).toBe('hunter2');
    expect(claimed?.cloud_identity).toEqual({
      kind: 'assume_role',
      provider: 'aws',
      role_arn: ROLE,
      external_id: externalIdOf(vine.cloud_identity as never),
    });
    expect(claimed?.identity_token).toBeNull();
    expect(core.uow.snapshot().jobs.get(job.id)?.status).toBe('PROCESSING');
  });

  it('answers no cloud identity for a vine without one', async () => {
    const plain = await seedVine(core, ada);
    await queue('PLAN', plain.id);
    expect((await core.useCases.jobs.claim(worker))?.cloud_identity).toBeNull();
  });

  it.each([
    ['PLAN', 'PLANNING'],
    ['DEPLOY', 'DEPLOYING'],
    ['DESTROY', 'DESTROYING'],
  ])('moves the vine of a %s job to %s', async (jobType, status) => {
    await queue(jobType);
    await core.useCases.jobs.claim(worker);
    expect(vineStatus()).toBe(status);
  });

  it('remembers the vine status from before the job', async () => {
    const plan = await seedRunningJob(core, ada, worker, vine, 'PLAN');
    await core.useCases.jobs.reportStatus(worker, plan.id, { status: 'SUCCESS' });
    await queue('DEPLOY');
    expect((await core.useCases.jobs.claim(worker))?.job.vine_status_before).toBe('PLANNED');
  });

  it('refuses a claim whose vine is in a status no job starts from, and leaves the job queued', async () => {
    const job = await queue('PLAN');
    await core.uow.run(systemScope, (stores) =>
      stores.vines.updateStatus(ada.userId, vine.id, 'DEPLOYING', null, core.clock.now().toISOString()),
    );
    await expect(core.useCases.jobs.claim(worker)).rejects.toMatchObject({ code: 'invalid_transition' });
    expect(core.uow.snapshot().jobs.get(job.id)).toMatchObject({ status: 'QUEUED', claimed_by_worker_id: null });
    expect(vineStatus()).toBe('DEPLOYING');
  });

  it("never gives a worker another owner's job", async () => {
    const bob = await seedUser(core);
    const bobsWorker = await seedWorker(core, bob);
    await queue('PLAN');
    expect(await core.useCases.jobs.claim(bobsWorker)).toBeNull();
    expect(await core.useCases.jobs.claim(worker)).not.toBeNull();
  });

  it('gives an assigned job to its worker only', async () => {
    const other = await seedWorker(core, ada);
    const job = await queue('PLAN', vine.id, { assigned_worker_id: other.workerId });
    expect(await core.useCases.jobs.claim(worker)).toBeNull();
    expect((await core.useCases.jobs.claim(other))?.job.id).toBe(job.id);
  });

  it('runs one job per vine at a time, in the order they were queued', async () => {
    const second = await seedWorker(core, ada);
    const plan = await queue('PLAN');
    const deploy = await queue('DEPLOY');
    const otherVine = await seedVine(core, ada);
    const elsewhere = await queue('PLAN', otherVine.id);
    expect((await core.useCases.jobs.claim(worker))?.job.id).toBe(plan.id);
    expect((await core.useCases.jobs.claim(second))?.job.id).toBe(elsewhere.id);
    expect(await core.useCases.jobs.claim(second)).toBeNull();
    await core.useCases.jobs.reportStatus(worker, plan.id, { status: 'SUCCESS' });
    expect((await core.useCases.jobs.claim(second))?.job.id).toBe(deploy.id);
  });

  it('keeps FIFO per vine: a later job waits for an earlier one assigned to another worker', async () => {
    const other = await seedWorker(core, ada);
    const first = await queue('PLAN', vine.id, { assigned_worker_id: other.workerId });
    await queue('PLAN');
    expect(await core.useCases.jobs.claim(worker)).toBeNull();
    expect((await core.useCases.jobs.claim(other))?.job.id).toBe(first.id);
  });

  it('takes the oldest job first across vines', async () => {
    const otherVine = await seedVine(core, ada);
    const older = await queue('PLAN', otherVine.id);
    core.clock.advance(10);
    await queue('PLAN');
    expect((await core.useCases.jobs.claim(worker))?.job.id).toBe(older.id);
  });

  it('never gives a DESTROY_WORKER job to its target, and leaves vines alone', async () => {
    const other = await seedWorker(core, ada);
    const job = await core.useCases.jobs.create(ada, { job_type: 'DESTROY_WORKER', target_worker_id: worker.workerId });
    expect(await core.useCases.jobs.claim(worker)).toBeNull();
    const claimed = await core.useCases.jobs.claim(other);
    expect(claimed?.job.id).toBe(job.id);
    expect(claimed?.cloud_identity).toBeNull();
    expect(vineStatus()).toBe('NEW');
  });

  it('never gives one job to two workers claiming at once', async () => {
    const workers = [worker, await seedWorker(core, ada), await seedWorker(core, ada)];
    const vines = [vine, await seedVine(core, ada)];
    for (const v of vines) await queue('PLAN', v.id);
    const results = await Promise.all(workers.map((w) => core.useCases.jobs.claim(w)));
    const claimed = results.filter((r) => r !== null).map((r) => r!.job.id);
    expect(claimed).toHaveLength(2);
    expect(new Set(claimed).size).toBe(2);
  });
});
