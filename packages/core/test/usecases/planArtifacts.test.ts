import { createHash } from 'node:crypto';
import {
  ConflictError,
  ForbiddenError,
  MAX_PLAN_ARTIFACT_BYTES,
  NotFoundError,
  planArtifactKey,
  TooLargeError,
  UnavailableError,
  ValidationError,
  type VineView,
} from '@trellis/core';
import {
  bodyOf,
  createTestCore,
  filledBody,
  readAll,
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

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const upload = (jobId: string, data: string | Buffer, by: TestWorker = worker) =>
  core.useCases.planArtifacts.upload(by, jobId, bodyOf(data, 7));

describe('plan artifacts', () => {
  it('are uploaded by the agent running the PLAN job and recorded with size and sha256', async () => {
    const plan = await seedRunningJob(core, ada, worker, vine);
    const data = Buffer.from('binary plan \u0000\u0001 content');
    expect(await upload(plan.id, data)).toEqual({ job_id: plan.id, size: data.length, sha256: sha256(data) });
    expect(core.uow.snapshot().planArtifacts.get(plan.id)).toEqual({
      job_id: plan.id,
      owner_id: ada.userId,
      storage_key: planArtifactKey(ada.userId, plan.id),
      size: data.length,
      sha256: sha256(data),
      created_at: core.clock.now().toISOString(),
    });
    expect(core.artifacts.bytesOf(planArtifactKey(ada.userId, plan.id))).toEqual(data);
  });

  it('may be downloaded by any worker of the owner', async () => {
    const plan = await seedRunningJob(core, ada, worker, vine);
    const data = Buffer.from('the plan');
    await upload(plan.id, data);
    const applier = await seedWorker(core, ada);
    const download = await core.useCases.planArtifacts.download(applier, plan.id);
    expect(download.size).toBe(data.length);
    expect(download.sha256).toBe(sha256(data));
    expect(await readAll(download.body)).toEqual(data);
  });

  it('are checked against the recorded sha256 on download: altered bytes end in artifact_digest_mismatch, never in full', async () => {
    const plan = await seedRunningJob(core, ada, worker, vine);
    const key = planArtifactKey(ada.userId, plan.id);
    await upload(plan.id, Buffer.from('the plan that was reviewed'));
    core.artifacts.tamper(key, Buffer.from('the plan that was replaced'));
    const download = await core.useCases.planArtifacts.download(worker, plan.id);
    const received: Buffer[] = [];
    const error = await (async () => {
      try {
        for await (const chunk of download.body) received.push(chunk as Buffer);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error).toMatchObject({ code: 'artifact_digest_mismatch' });
    expect(Buffer.concat(received).length, 'bytes served before the error').toBeLessThan(download.size);
  });

  it('refuse a download whose stored size differs from the record before a byte is served', async () => {
    const plan = await seedRunningJob(core, ada, worker, vine);
    await upload(plan.id, Buffer.from('the plan'));
    core.artifacts.tamper(planArtifactKey(ada.userId, plan.id), Buffer.from('a longer plan'));
    await expectFailure(
      core.useCases.planArtifacts.download(worker, plan.id),
      UnavailableError,
      'artifact_digest_mismatch',
    );
  });

  it('replace an earlier upload of the same job', async () => {
    const plan = await seedRunningJob(core, ada, worker, vine);
    await upload(plan.id, 'first');
    await upload(plan.id, 'second');
    expect(await readAll((await core.useCases.planArtifacts.download(worker, plan.id)).body)).toEqual(
      Buffer.from('second'),
    );
  });

  it('403 for any worker but the one that claimed the job', async () => {
    const plan = await seedRunningJob(core, ada, worker, vine);
    const other = await seedWorker(core, ada);
    await expectFailure(upload(plan.id, 'x', other), ForbiddenError, 'job_not_claimed_by_worker');
    expect(core.artifacts.keys()).toEqual([]);
  });

  it('409 for a job that is not a PLAN, or not running', async () => {
    const deploy = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await expectFailure(upload(deploy.id, 'x'), ConflictError, 'not_a_plan_job');
    await core.useCases.jobs.reportStatus(worker, deploy.id, { status: 'SUCCESS' });
    const plan = await seedRunningJob(core, ada, worker, vine);
    await core.useCases.jobs.reportStatus(worker, plan.id, { status: 'SUCCESS' });
    await expectFailure(upload(plan.id, 'x'), ConflictError, 'job_not_running');
    expect(core.artifacts.keys()).toEqual([]);
  });

  it('refuse a body over 50 MiB and keep the earlier artifact intact', async () => {
    expect(MAX_PLAN_ARTIFACT_BYTES).toBe(50 * 1024 * 1024);
    const plan = await seedRunningJob(core, ada, worker, vine);
    const earlier = Buffer.from('the earlier plan');
    await upload(plan.id, earlier);
    const recordBefore = core.uow.snapshot().planArtifacts.get(plan.id);
    const error = await expectFailure(
      core.useCases.planArtifacts.upload(worker, plan.id, filledBody(MAX_PLAN_ARTIFACT_BYTES + 1)),
      TooLargeError,
    );
    expect(error.limitBytes).toBe(MAX_PLAN_ARTIFACT_BYTES);
    expect(core.artifacts.lastPutChunksRead).toBe(51);
    expect(core.uow.snapshot().planArtifacts.get(plan.id)).toEqual(recordBefore);
    expect(await readAll((await core.useCases.planArtifacts.download(worker, plan.id)).body)).toEqual(earlier);
  });

  it('accept exactly 50 MiB', async () => {
    const plan = await seedRunningJob(core, ada, worker, vine);
    const result = await core.useCases.planArtifacts.upload(worker, plan.id, filledBody(MAX_PLAN_ARTIFACT_BYTES));
    expect(result.size).toBe(MAX_PLAN_ARTIFACT_BYTES);
  });

  it("404 for another owner's worker, both ways", async () => {
    const plan = await seedRunningJob(core, ada, worker, vine);
    await upload(plan.id, 'plan');
    const bob = await seedUser(core);
    const bobsWorker = await seedWorker(core, bob);
    await expectFailure(upload(plan.id, 'x', bobsWorker), NotFoundError, 'job_not_found');
    await expectFailure(core.useCases.planArtifacts.download(bobsWorker, plan.id), NotFoundError, 'job_not_found');
  });

  it('404 plan_artifact_not_found before anything was uploaded; 400 for a malformed id', async () => {
    const plan = await seedRunningJob(core, ada, worker, vine);
    await expectFailure(
      core.useCases.planArtifacts.download(worker, plan.id),
      NotFoundError,
      'plan_artifact_not_found',
    );
    await expectFailure(core.useCases.planArtifacts.download(worker, 'x'), ValidationError);
    await expectFailure(upload('x', 'plan'), ValidationError);
  });

  it('surface an artifact store outage as UnavailableError and record nothing', async () => {
    const plan = await seedRunningJob(core, ada, worker, vine);
    core.artifacts.unavailable = true;
    await expectFailure(upload(plan.id, 'plan'), UnavailableError);
    expect(core.uow.snapshot().planArtifacts.size).toBe(0);
  });
});
