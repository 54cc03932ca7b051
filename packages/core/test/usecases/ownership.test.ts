import { NotFoundError, type VineView } from '@trellis/core';
import {
  bodyOf,
  createTestCore,
  seedRunningJob,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  type TestWorker,
} from '@trellis/testkit/memory';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectFailure } from './helpers.js';

/** Every record of Ada's, reached by Bob or his agent by id or name: always 404, never 403. */
let core: TestCore;
let ada: TestUser;
let adasWorker: TestWorker;
let adasVine: VineView;
let adasJob: { id: string };
let adasPlan: { id: string };
let bob: TestUser;
let bobsWorker: TestWorker;
let bobsVine: VineView;

beforeAll(async () => {
  core = createTestCore();
  ada = await seedUser(core);
  adasWorker = await seedWorker(core, ada, { heartbeat: true });
  adasVine = await seedVine(core, ada, {
    name: 'adas',
    project_name: 'adas-project',
    cloud_identity: { role_arn: 'arn:aws:iam::123456789012:role/x' },
  });
  adasPlan = await seedRunningJob(core, ada, adasWorker, adasVine, 'PLAN');
  await core.useCases.planArtifacts.upload(adasWorker, adasPlan.id, bodyOf('plan'));
  await core.useCases.jobs.reportStatus(adasWorker, adasPlan.id, { status: 'SUCCESS' });
  adasJob = await seedRunningJob(core, ada, adasWorker, adasVine, 'DEPLOY');
  bob = await seedUser(core);
  bobsWorker = await seedWorker(core, bob, { heartbeat: true });
  bobsVine = await seedVine(core, bob);
});

describe("another owner's records are not found", () => {
  const cases: [string, () => Promise<unknown>][] = [
    ['vineyard', () => core.useCases.vineyards.get(bob, adasVine.vineyard_id)],
    ['configuration by id', () => core.useCases.vines.get(bob, adasVine.id)],
    ['configuration by name', () => core.useCases.vines.get(bob, 'adas')],
    ['configuration by project name', () => core.useCases.vines.getByProjectName(bob, 'adas-project')],
    [
      'configuration in their vineyard',
      () =>
        core.useCases.vines.create(bob, {
          name: 'x',
          vineyard_id: adasVine.vineyard_id,
          source: { type: 'inline', files: { 'main.tf': '' } },
        }),
    ],
    [
      'their cloud identity',
      () =>
        core.useCases.vines.create(bob, {
          name: 'x',
          vineyard_id: bobsVine.vineyard_id,
          source: { type: 'inline', files: { 'main.tf': '' } },
          cloud_identity_id: adasVine.cloud_identity_id,
        }),
    ],
    ['job', () => core.useCases.jobs.get(bob, adasJob.id)],
    ['job for a worker', () => core.useCases.jobs.getForWorker(bobsWorker, adasJob.id)],
    ['job cancel', () => core.useCases.jobs.cancel(bob, adasJob.id)],
    ['job on their vine', () => core.useCases.jobs.create(bob, { job_type: 'PLAN', configuration_id: adasVine.id })],
    [
      'job on their worker',
      () =>
        core.useCases.jobs.create(bob, {
          job_type: 'PLAN',
          configuration_id: bobsVine.id,
          assigned_worker_id: adasWorker.workerId,
        }),
    ],
    [
      'DESTROY_WORKER of their worker',
      () => core.useCases.jobs.create(bob, { job_type: 'DESTROY_WORKER', target_worker_id: adasWorker.workerId }),
    ],
    [
      'deploy of their plan',
      () =>
        core.useCases.jobs.create(bob, { job_type: 'DEPLOY', configuration_id: bobsVine.id, plan_job_id: adasPlan.id }),
    ],
    ['status report', () => core.useCases.jobs.reportStatus(bobsWorker, adasJob.id, { status: 'FAILED' })],
    ['log append', () => core.useCases.logs.append(bobsWorker, adasJob.id, { log_chunk: 'x', stream_type: 'STDOUT' })],
    ['log read', () => core.useCases.logs.read(bob.userId, adasJob.id)],
    ['plan upload', () => core.useCases.planArtifacts.upload(bobsWorker, adasPlan.id, bodyOf('x'))],
    ['plan download', () => core.useCases.planArtifacts.download(bobsWorker, adasPlan.id)],
    ['worker', () => core.useCases.workers.get(bob.userId, adasWorker.workerId)],
  ];

  it.each(cases)('%s', async (_what, attempt) => {
    await expectFailure(attempt(), NotFoundError);
  });

  it('and are absent from every list and claim', async () => {
    expect((await core.useCases.vineyards.list(bob)).items).toEqual([
      expect.objectContaining({ id: bobsVine.vineyard_id }),
    ]);
    expect((await core.useCases.vines.list(bob)).items.map((v) => v.id)).toEqual([bobsVine.id]);
    expect((await core.useCases.jobs.list(bob)).items).toEqual([]);
    expect((await core.useCases.workers.list(bob.userId)).items.map((w) => w.id)).toEqual([bobsWorker.workerId]);
    await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: (await seedVine(core, ada)).id });
    expect(await core.useCases.jobs.claim(bobsWorker)).toBeNull();
  });

  it("and nothing of Ada's changed", async () => {
    const job = core.uow.snapshot().jobs.get(adasJob.id)!;
    expect(job.status).toBe('PROCESSING');
    expect(core.uow.snapshot().logs.filter((row) => row.chunk.job_id === adasJob.id)).toEqual([]);
  });
});
