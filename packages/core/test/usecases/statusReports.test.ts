import {
  ConflictError,
  ForbiddenError,
  type Job,
  NotFoundError,
  systemScope,
  TooLargeError,
  UnauthorizedError,
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

const report = (job: { id: string }, body: Record<string, unknown>, by: TestWorker = worker) =>
  core.useCases.jobs.reportStatus(by, job.id, body as { status: unknown });
const storedJob = (id: string) => core.uow.snapshot().jobs.get(id)!;
const storedVine = () => core.uow.snapshot().vines.get(vine.id)!;
const components = () => core.useCases.vines.get(ada, vine.id).then((view) => view.components);

describe('status reports', () => {
  it('refuses QUEUED as a target (400) and unknown statuses', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    const error = await expectFailure(report(job, { status: 'QUEUED' }), ValidationError, 'validation_failed');
    expect(error.fields).toEqual([expect.objectContaining({ path: 'status' })]);
    await expectFailure(report(job, { status: 'DONE' }), ValidationError);
    await expectFailure(report(job, { status: 'success' }), ValidationError);
    await expectFailure(report(job, { status: undefined }), ValidationError);
    expect(storedJob(job.id).status).toBe('PROCESSING');
  });

  it('refuses malformed metadata and error messages', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await expectFailure(report(job, { status: 'PROCESSING', execution_metadata: [1] }), ValidationError);
    await expectFailure(report(job, { status: 'PROCESSING', execution_metadata: 'x' }), ValidationError);
    await expectFailure(
      report(job, { status: 'PROCESSING', execution_metadata: { blob: 'x'.repeat(256 * 1024) } }),
      ValidationError,
    );
    await expectFailure(report(job, { status: 'FAILED', error_message: 42 }), ValidationError);
    expect(storedJob(job.id).status).toBe('PROCESSING');
  });

  it('only the worker that claimed the job may report (403 job_not_claimed_by_worker)', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    const other = await seedWorker(core, ada);
    await expectFailure(report(job, { status: 'SUCCESS' }, other), ForbiddenError, 'job_not_claimed_by_worker');
    const queued = await core.useCases.jobs.create(ada, {
      job_type: 'PLAN',
      configuration_id: (await seedVine(core, ada)).id,
    });
    await expectFailure(report(queued, { status: 'PROCESSING' }), ForbiddenError, 'job_not_claimed_by_worker');
    expect(storedJob(job.id).status).toBe('PROCESSING');
  });

  it('404s a job of another owner', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    const bob = await seedUser(core);
    const bobsWorker = await seedWorker(core, bob);
    await expectFailure(report(job, { status: 'SUCCESS' }, bobsWorker), NotFoundError, 'job_not_found');
  });

  it('409 invalid_transition once the job is terminal', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await report(job, { status: 'SUCCESS' });
    for (const status of ['PROCESSING', 'SUCCESS', 'FAILED', 'CANCELLED']) {
      await expectFailure(report(job, { status }), ConflictError, 'invalid_transition');
    }
    expect(storedJob(job.id).status).toBe('SUCCESS');
  });

  it('PROCESSING only merges metadata; the vine stays in progress', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await report(job, { status: 'PROCESSING', execution_metadata: { step: 'init', a: 1 } });
    const updated = await report(job, { status: 'PROCESSING', execution_metadata: { step: 'plan' } });
    expect(updated).toMatchObject({
      status: 'PROCESSING',
      execution_metadata: { step: 'plan', a: 1 },
      finished_at: null,
    });
    expect(storedVine().status).toBe('PLANNING');
  });

  it('SUCCESS of a PLAN finishes the job and leaves the vine PLANNED', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    core.clock.advance({ seconds: 30 });
    const done = await report(job, { status: 'SUCCESS' });
    expect(done).toMatchObject({ status: 'SUCCESS', finished_at: core.clock.now().toISOString(), error_message: null });
    expect(storedVine()).toMatchObject({ status: 'PLANNED', status_message: null });
  });

  it('FAILED sets the vine FAILED with the error message', async () => {
    const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    const failed = await report(job, { status: 'FAILED', error_message: 'Error: creating EKS cluster: AccessDenied' });
    expect(failed).toMatchObject({ status: 'FAILED', error_message: 'Error: creating EKS cluster: AccessDenied' });
    expect(failed.finished_at).not.toBeNull();
    expect(storedVine()).toMatchObject({
      status: 'FAILED',
      status_message: 'Error: creating EKS cluster: AccessDenied',
    });
  });

  it('FAILED without a message still explains itself; a long message is cut', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await report(job, { status: 'FAILED' });
    expect(storedVine().status_message).toBe('the job failed');
    const next = await seedRunningJob(core, ada, worker, vine);
    const failed = await report(next, { status: 'FAILED', error_message: 'e'.repeat(5000) });
    expect(failed.error_message!.length).toBeLessThanOrEqual(4001);
    expect(failed.error_message!.startsWith('e'.repeat(4000))).toBe(true);
  });

  it('CANCELLED from the agent restores the vine', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    const cancelled = await report(job, { status: 'CANCELLED' });
    expect(cancelled).toMatchObject({ status: 'CANCELLED', error_message: 'cancelled by the agent' });
    expect(storedVine().status).toBe('NEW');
  });

  describe('DEPLOY SUCCESS runs finalizeDeployment', () => {
    const metadata = {
      cluster_name: 'prod-eks',
      cluster_endpoint: 'https://eks.example.test',
      argocd_url: 'https://argocd.example.test',
      outputs: {
        vpc_id: { value: 'vpc-123', type: 'string', sensitive: false },
        db_password: { value: 'hunter2', type: 'string', sensitive: true },
        plain: 42,
        list: ['a', 'b'],
      },
    };

    it('writes the components from the outputs, naming (not keeping) sensitive ones, and the vine is DEPLOYED', async () => {
      const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
      await report(job, { status: 'SUCCESS', execution_metadata: metadata });
      expect(await components()).toEqual({
        cluster: { name: 'prod-eks', endpoint: 'https://eks.example.test', job_id: job.id },
        argocd: { url: 'https://argocd.example.test', job_id: job.id },
        outputs: {
          values: { vpc_id: 'vpc-123', plain: 42, list: ['a', 'b'] },
          sensitive: ['db_password'],
          job_id: job.id,
        },
      });
      expect(JSON.stringify(core.uow.snapshot().components.get(vine.id))).not.toContain('hunter2');
      expect(storedVine().status).toBe('DEPLOYED');
    });

    it('never keeps a sensitive output in clear in the job either, nor shows it to people', async () => {
      const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
      await report(job, { status: 'PROCESSING', execution_metadata: { outputs: metadata.outputs } });
      await report(job, { status: 'SUCCESS', execution_metadata: metadata });
      expect(JSON.stringify(storedJob(job.id))).not.toContain('hunter2');
      expect(JSON.stringify(await core.useCases.jobs.get(ada, job.id))).not.toContain('hunter2');
      expect(JSON.stringify((await core.useCases.jobs.list(ada)).items)).not.toContain('hunter2');
      const outputs = storedJob(job.id).execution_metadata.outputs as Record<string, unknown>;
      expect(outputs.db_password).toMatchObject({ sensitive: true });
      expect(outputs.vpc_id).toEqual(metadata.outputs.vpc_id);
      expect((await components()).outputs?.values).toEqual({ vpc_id: 'vpc-123', plain: 42, list: ['a', 'b'] });
    });

    it('uses metadata reported earlier while the job ran', async () => {
      const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
      await report(job, { status: 'PROCESSING', execution_metadata: { cluster_name: 'early' } });
      await report(job, { status: 'SUCCESS', execution_metadata: { outputs: {} } });
      expect((await components()).cluster).toEqual({ name: 'early', endpoint: null, job_id: job.id });
      expect((await components()).argocd).toBeNull();
    });

    it('keeps components a later deploy does not report', async () => {
      const first = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
      await report(first, { status: 'SUCCESS', execution_metadata: metadata });
      const second = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
      await report(second, { status: 'SUCCESS', execution_metadata: { outputs: { only: 1 } } });
      const now = await components();
      expect(now.cluster?.job_id).toBe(first.id);
      expect(now.outputs).toEqual({ values: { only: 1 }, sensitive: [], job_id: second.id });
    });

    it('refuses malformed outputs and commits nothing', async () => {
      const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
      for (const bad of [
        { cluster_endpoint: 'not a url' },
        { argocd_url: 7 },
        { cluster_name: {} },
        { outputs: [1] },
      ]) {
        const error = await expectFailure(report(job, { status: 'SUCCESS', execution_metadata: bad }), ValidationError);
        expect(error.fields[0]?.path).toMatch(/^execution_metadata\./);
      }
      expect(storedJob(job.id).status).toBe('PROCESSING');
      expect(storedVine().status).toBe('DEPLOYING');
    });

    it('commits nothing when finalizeDeployment fails', async () => {
      const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
      core.uow.wrapStores = (stores) => ({
        ...stores,
        vines: Object.assign(Object.create(stores.vines), {
          saveComponents: async () => {
            throw new Error('disk full');
          },
        }),
      });
      const before = core.uow.snapshot();
      await expect(report(job, { status: 'SUCCESS', execution_metadata: metadata })).rejects.toThrow('disk full');
      expect(core.uow.snapshot()).toEqual(before);
      core.uow.wrapStores = undefined;
      expect(storedJob(job.id).status).toBe('PROCESSING');
      expect(storedVine().status).toBe('DEPLOYING');
      await report(job, { status: 'SUCCESS', execution_metadata: metadata });
      expect((await components()).cluster?.name).toBe('prod-eks');
    });

    it('a FAILED deploy writes no components', async () => {
      const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
      await report(job, { status: 'FAILED', execution_metadata: metadata });
      expect(await components()).toEqual({ cluster: null, argocd: null, outputs: null });
    });

    it('a PLAN success writes no components', async () => {
      const job = await seedRunningJob(core, ada, worker, vine, 'PLAN');
      await report(job, { status: 'SUCCESS', execution_metadata: metadata });
      expect(await components()).toEqual({ cluster: null, argocd: null, outputs: null });
    });
  });

  it('DESTROY SUCCESS clears the components and the last drift check, and the vine is DESTROYED', async () => {
    const deploy = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await report(deploy, { status: 'SUCCESS', execution_metadata: { cluster_name: 'c', outputs: { a: 1 } } });
    const drift = {
      status: 'drifted' as const,
      checked_at: new Date().toISOString(),
      job_id: deploy.id,
      changes: { add: 0, change: 1, destroy: 0 },
    };
    await core.uow.run(systemScope, (stores) => stores.vines.recordDrift(ada.userId, vine.id, drift));
    expect(storedVine().drift).toEqual(drift);
    const destroy = await seedRunningJob(core, ada, worker, vine, 'DESTROY');
    expect(storedVine().status).toBe('DESTROYING');
    await report(destroy, { status: 'SUCCESS' });
    expect(await components()).toEqual({ cluster: null, argocd: null, outputs: null });
    expect(storedVine().status).toBe('DESTROYED');
    expect(storedVine().drift).toBeNull();
  });

  it('a FAILED DESTROY keeps the components', async () => {
    const deploy = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await report(deploy, { status: 'SUCCESS', execution_metadata: { cluster_name: 'c' } });
    const destroy = await seedRunningJob(core, ada, worker, vine, 'DESTROY');
    await report(destroy, { status: 'FAILED', error_message: 'stuck' });
    expect((await components()).cluster?.name).toBe('c');
  });

  describe('DESTROY_WORKER', () => {
    async function destroyJob(target: TestWorker): Promise<Job> {
      const job = await core.useCases.jobs.create(ada, {
        job_type: 'DESTROY_WORKER',
        target_worker_id: target.workerId,
      });
      expect((await core.useCases.jobs.claim(worker))?.job.id).toBe(job.id);
      return job;
    }

    it('SUCCESS marks the target destroyed and its token stops working', async () => {
      const target = await seedWorker(core, ada, { heartbeat: true });
      const job = await destroyJob(target);
      await expect(core.useCases.workers.authenticate(target.workerId, target.token)).resolves.toBeTruthy();
      await report(job, { status: 'SUCCESS' });
      await expectFailure(core.useCases.workers.authenticate(target.workerId, target.token), UnauthorizedError);
      expect((await core.useCases.workers.get(ada.userId, target.workerId)).status).toBe('DESTROYED');
      expect(core.uow.snapshot().workers.get(target.workerId)?.destroyed_at).toBe(core.clock.now().toISOString());
      await expect(core.useCases.workers.authenticate(worker.workerId, worker.token)).resolves.toBeTruthy();
    });

    it('SUCCESS cancels queued jobs assigned to the target, so they no longer hold their vine', async () => {
      const target = await seedWorker(core, ada, { heartbeat: true });
      const job = await destroyJob(target);
      const stuck = await core.useCases.jobs.create(ada, {
        job_type: 'PLAN',
        configuration_id: vine.id,
        assigned_worker_id: target.workerId,
      });
      const next = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
      await report(job, { status: 'SUCCESS' });
      expect(storedJob(stuck.id)).toMatchObject({
        status: 'CANCELLED',
        error_message: expect.stringMatching(/destroyed/),
      });
      expect(storedJob(next.id).status).toBe('QUEUED');
      expect((await core.useCases.jobs.claim(worker))?.job.id).toBe(next.id);
    });

    it('FAILED leaves the target alive', async () => {
      const target = await seedWorker(core, ada);
      const job = await destroyJob(target);
      await report(job, { status: 'FAILED', error_message: 'could not reach the host' });
      await expect(core.useCases.workers.authenticate(target.workerId, target.token)).resolves.toBeTruthy();
      expect(storedVine().status).toBe('NEW');
    });
  });
});

describe('the merged execution_metadata cap', () => {
  it('refuses an update whose merge would pass the cap (413 metadata_too_large) and keeps the metadata as it was', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    const piece = 'm'.repeat(250 * 1024);
    for (const key of ['a', 'b', 'c', 'd'])
      await report(job, { status: 'PROCESSING', execution_metadata: { [key]: piece } });
    const before = storedJob(job.id).execution_metadata;
    await expectFailure(
      report(job, { status: 'PROCESSING', execution_metadata: { e: piece } }),
      TooLargeError,
      'metadata_too_large',
    );
    await expectFailure(report(job, { status: 'SUCCESS', execution_metadata: { e: piece } }), TooLargeError);
    expect(storedJob(job.id)).toMatchObject({ status: 'PROCESSING', execution_metadata: before });
    expect(Buffer.byteLength(JSON.stringify(before))).toBeLessThanOrEqual(core.settings.maxExecutionMetadataBytes);
  });
});
