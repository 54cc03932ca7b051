import {
  ConflictError,
  configHash,
  InsufficientRoleError,
  type Job,
  NotFoundError,
  snapshotOfVine,
  ValidationError,
  type VineView,
} from '@trellis/core';
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
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { expectFailure, readsDuring, UNKNOWN_ID } from './helpers.js';

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
    variables: { secret: { value: 'hunter2', sensitive: true }, region: 'eu' },
    cloud_identity: { role_arn: ROLE },
  });
});

/** A PLAN job of the vine that succeeded, with or without an uploaded artifact. */
async function succeededPlan(withArtifact = true): Promise<Job> {
  const plan = await seedRunningJob(core, ada, worker, vine, 'PLAN');
  if (withArtifact) await core.useCases.planArtifacts.upload(worker, plan.id, bodyOf('plan-bytes'));
  return core.useCases.jobs.reportStatus(worker, plan.id, { status: 'SUCCESS' });
}

const deployOf = (planJobId: string, configurationId = vine.id) =>
  core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: configurationId, plan_job_id: planJobId });

describe('creating a job', () => {
  it('queues a job with the vine’s snapshot and hash, resolving vineyard and cloud identity itself', async () => {
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    const stored = core.uow.snapshot().jobs.get(job.id)!;
    const storedVine = core.uow.snapshot().vines.get(vine.id)!;
    expect(stored).toMatchObject({
      owner_id: ada.userId,
      job_type: 'PLAN',
      status: 'QUEUED',
      vine_id: vine.id,
      vineyard_id: vine.vineyard_id,
      cloud_identity_id: vine.cloud_identity_id,
      assigned_worker_id: null,
      claimed_by_worker_id: null,
      plan_job_id: null,
      target_worker_id: null,
      execution_metadata: {},
      error_message: null,
      created_at: core.clock.now().toISOString(),
      claimed_at: null,
      finished_at: null,
    });
    expect(stored.config_snapshot).toEqual(snapshotOfVine(storedVine));
    expect(stored.config_snapshot.variables.secret?.value).toBe('hunter2');
    expect(stored.config_hash).toBe(configHash(snapshotOfVine(storedVine)));
  });

  it('shows people the job with sensitive values hidden', async () => {
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect(job.config_snapshot.variables.secret).toEqual({ value: '***', sensitive: true });
    for (const view of [job, await core.useCases.jobs.get(ada, job.id), (await core.useCases.jobs.list(ada)).items]) {
      expect(JSON.stringify(view)).not.toContain('hunter2');
    }
    expect(job.config_hash).toBe(core.uow.snapshot().jobs.get(job.id)!.config_hash);
  });

  it.each([
    [{ job_type: 'APPLY', configuration_id: UNKNOWN_ID }, 'job_type'],
    [{ job_type: undefined, configuration_id: UNKNOWN_ID }, 'job_type'],
    [{ job_type: 'PLAN' }, 'configuration_id'],
    [{ job_type: 'PLAN', configuration_id: 'web' }, 'configuration_id'],
    [{ job_type: 'DESTROY_WORKER' }, 'target_worker_id'],
    [{ job_type: 'PLAN', configuration_id: UNKNOWN_ID, plan_job_id: UNKNOWN_ID }, 'plan_job_id'],
    [{ job_type: 'PLAN', configuration_id: UNKNOWN_ID, assigned_worker_id: 'x' }, 'assigned_worker_id'],
  ])('refuses %j (%s)', async (input, path) => {
    const error = await expectFailure(core.useCases.jobs.create(ada, input), ValidationError, 'validation_failed');
    expect(error.fields.map((field) => field.path)).toContain(path);
    expect(core.uow.snapshot().jobs.size).toBe(0);
  });

  it('404s an unknown configuration or one of another owner', async () => {
    await expectFailure(
      core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: UNKNOWN_ID }),
      NotFoundError,
      'configuration_not_found',
    );
    const bob = await seedUser(core);
    await expectFailure(
      core.useCases.jobs.create(bob, { job_type: 'DEPLOY', configuration_id: vine.id }),
      NotFoundError,
      'configuration_not_found',
    );
  });

  it('assigns a job to one of the owner’s live workers only', async () => {
    const job = await core.useCases.jobs.create(ada, {
      job_type: 'PLAN',
      configuration_id: vine.id,
      assigned_worker_id: worker.workerId,
    });
    expect(job.assigned_worker_id).toBe(worker.workerId);
    const bob = await seedUser(core);
    const bobsWorker = await seedWorker(core, bob);
    await expectFailure(
      core.useCases.jobs.create(ada, {
        job_type: 'PLAN',
        configuration_id: vine.id,
        assigned_worker_id: bobsWorker.workerId,
      }),
      NotFoundError,
      'worker_not_found',
    );
  });

  describe('DESTROY_WORKER', () => {
    it('needs a target worker and snapshots it instead of a vine', async () => {
      const target = await seedWorker(core, ada, { name: 'old-runner' });
      const job = await core.useCases.jobs.create(ada, {
        job_type: 'DESTROY_WORKER',
        target_worker_id: target.workerId,
      });
      expect(job).toMatchObject({
        job_type: 'DESTROY_WORKER',
        target_worker_id: target.workerId,
        vine_id: null,
        vineyard_id: null,
        cloud_identity_id: null,
      });
      expect(job.config_snapshot.target_worker).toEqual({
        id: target.workerId,
        name: 'old-runner',
        mode: 'self-hosted',
      });
      expect(job.config_snapshot.vine).toBeNull();
    });

    it('404s a target of another owner and 409s a destroyed one', async () => {
      const bob = await seedUser(core);
      const bobsWorker = await seedWorker(core, bob);
      await expectFailure(
        core.useCases.jobs.create(ada, { job_type: 'DESTROY_WORKER', target_worker_id: bobsWorker.workerId }),
        NotFoundError,
        'worker_not_found',
      );
      const target = await seedWorker(core, ada);
      const destroy = await core.useCases.jobs.create(ada, {
        job_type: 'DESTROY_WORKER',
        target_worker_id: target.workerId,
      });
      expect((await core.useCases.jobs.claim(worker))?.job.id).toBe(destroy.id);
      await core.useCases.jobs.reportStatus(worker, destroy.id, { status: 'SUCCESS' });
      await expectFailure(
        core.useCases.jobs.create(ada, { job_type: 'DESTROY_WORKER', target_worker_id: target.workerId }),
        ConflictError,
        'worker_destroyed',
      );
      await expectFailure(
        core.useCases.jobs.create(ada, {
          job_type: 'PLAN',
          configuration_id: vine.id,
          assigned_worker_id: target.workerId,
        }),
        ConflictError,
        'worker_destroyed',
      );
    });

    it('cannot be assigned to the worker it destroys', async () => {
      await expectFailure(
        core.useCases.jobs.create(ada, {
          job_type: 'DESTROY_WORKER',
          target_worker_id: worker.workerId,
          assigned_worker_id: worker.workerId,
        }),
        ValidationError,
      );
    });
  });

  describe('DEPLOY of a plan', () => {
    it('is accepted for a succeeded plan of the same, unchanged vine with an artifact', async () => {
      const plan = await succeededPlan();
      const deploy = await deployOf(plan.id);
      expect(deploy).toMatchObject({ job_type: 'DEPLOY', plan_job_id: plan.id, status: 'QUEUED' });
      expect(deploy.config_hash).toBe(plan.config_hash);
    });

    it('reads the plan once, locked: the deploy gate and the offer to its agent take that read (issue 31)', async () => {
      const plan = await succeededPlan();
      const other = await seedWorker(core, ada, { heartbeat: true });
      let deploy: Job | undefined;
      const reads = await readsDuring(core, { jobs: ['get', 'getForUpdate'] }, async () => {
        deploy = await deployOf(plan.id);
      });
      expect(reads).toEqual([`jobs.getForUpdate ${plan.id}`]);
      // Offered to the plan's agent first, as when the plan was read three times.
      expect(await core.useCases.jobs.claim(other)).toBeNull();
      expect((await core.useCases.jobs.claim(worker))?.job.id).toBe(deploy?.id);
    });

    it('409 plan_not_ready while the plan is queued or running', async () => {
      const queued = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
      await expectFailure(deployOf(queued.id), ConflictError, 'plan_not_ready');
      await core.useCases.jobs.claim(worker);
      await core.useCases.planArtifacts.upload(worker, queued.id, bodyOf('plan'));
      await expectFailure(deployOf(queued.id), ConflictError, 'plan_not_ready');
    });

    it('409 plan_not_ready when the plan failed, even with an artifact', async () => {
      const plan = await seedRunningJob(core, ada, worker, vine, 'PLAN');
      await core.useCases.planArtifacts.upload(worker, plan.id, bodyOf('plan'));
      await core.useCases.jobs.reportStatus(worker, plan.id, { status: 'FAILED' });
      await expectFailure(deployOf(plan.id), ConflictError, 'plan_not_ready');
    });

    it('409 plan_not_ready when the plan succeeded without an artifact', async () => {
      const plan = await succeededPlan(false);
      await expectFailure(deployOf(plan.id), ConflictError, 'plan_not_ready');
    });

    it('409 plan_already_applied while another deploy of the plan is queued, running or done', async () => {
      const plan = await succeededPlan();
      const first = await deployOf(plan.id);
      await expectFailure(deployOf(plan.id), ConflictError, 'plan_already_applied');
      await core.useCases.jobs.claim(worker);
      await expectFailure(deployOf(plan.id), ConflictError, 'plan_already_applied');
      await core.useCases.jobs.reportStatus(worker, first.id, { status: 'SUCCESS' });
      await expectFailure(deployOf(plan.id), ConflictError, 'plan_already_applied');
    });

    it('lets the plan be applied again after its deploy failed or was cancelled', async () => {
      const plan = await succeededPlan();
      const first = await deployOf(plan.id);
      await core.useCases.jobs.cancel(ada, first.id);
      const second = await deployOf(plan.id);
      await core.useCases.jobs.claim(worker);
      await core.useCases.jobs.reportStatus(worker, second.id, { status: 'FAILED', error_message: 'apply failed' });
      await expect(deployOf(plan.id)).resolves.toMatchObject({ plan_job_id: plan.id });
    });

    it('409 plan_stale when the vine changed since the plan', async () => {
      const plan = await succeededPlan();
      await core.uow.modify((state) => {
        state.vines.get(vine.id)!.variables.region = { value: 'us-east-1', sensitive: false };
      });
      await expectFailure(deployOf(plan.id), ConflictError, 'plan_stale');
      await core.uow.modify((state) => {
        state.vines.get(vine.id)!.variables.region = { value: 'eu', sensitive: false };
      });
      await expect(deployOf(plan.id)).resolves.toMatchObject({ plan_job_id: plan.id });
    });

    it('is not stale because the vine’s status moved', async () => {
      const plan = await succeededPlan();
      expect(core.uow.snapshot().vines.get(vine.id)!.status).toBe('PLANNED');
      await expect(deployOf(plan.id)).resolves.toBeTruthy();
    });

    it('refuses a plan of another vine, or a job that is not a plan (400)', async () => {
      const plan = await succeededPlan();
      const other = await seedVine(core, ada);
      const error = await expectFailure(deployOf(plan.id, other.id), ValidationError);
      expect(error.fields).toEqual([expect.objectContaining({ path: 'plan_job_id' })]);
      const deploy = await core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id });
      await expectFailure(deployOf(deploy.id), ValidationError);
    });

    it('404s an unknown plan or one of another owner', async () => {
      await expectFailure(deployOf(UNKNOWN_ID), NotFoundError, 'plan_job_not_found');
      const plan = await succeededPlan();
      const bob = await seedUser(core);
      const bobsVine = await seedVine(core, bob);
      await expectFailure(
        core.useCases.jobs.create(bob, { job_type: 'DEPLOY', configuration_id: bobsVine.id, plan_job_id: plan.id }),
        NotFoundError,
        'plan_job_not_found',
      );
    });
  });
});

describe('reading jobs', () => {
  it('lists the owner’s jobs newest first, filtered by status and vineyard', async () => {
    const other = await seedVine(core, ada);
    const a = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    core.clock.advance(1000);
    const b = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: other.id });
    core.clock.advance(1000);
    const c = await core.useCases.jobs.create(ada, { job_type: 'DESTROY', configuration_id: other.id });
    await core.useCases.jobs.cancel(ada, c.id);
    const ids = async (query = {}) => (await core.useCases.jobs.list(ada, query)).items.map((job) => job.id);
    expect(await ids()).toEqual([c.id, b.id, a.id]);
    expect(await ids({ status: 'QUEUED' })).toEqual([b.id, a.id]);
    expect(await ids({ status: 'CANCELLED' })).toEqual([c.id]);
    expect(await ids({ vineyard_id: vine.vineyard_id })).toEqual([a.id]);
    expect(await ids({ vineyard_id: other.vineyard_id.toUpperCase(), status: 'QUEUED' })).toEqual([b.id]);
    await expectFailure(core.useCases.jobs.list(ada, { status: 'queued' }), ValidationError);
    await expectFailure(core.useCases.jobs.list(ada, { vineyard_id: 'x' }), ValidationError);
    const bob = await seedUser(core);
    expect((await core.useCases.jobs.list(bob)).items).toEqual([]);
  });

  it('gets a job of the owner; 404 for another owner, 400 for a malformed id', async () => {
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect((await core.useCases.jobs.get(ada, job.id)).id).toBe(job.id);
    const bob = await seedUser(core);
    await expectFailure(core.useCases.jobs.get(bob, job.id), NotFoundError, 'job_not_found');
    await expectFailure(core.useCases.jobs.get(ada, 'nope'), ValidationError);
    const bobsWorker = await seedWorker(core, bob);
    await expectFailure(core.useCases.jobs.getForWorker(bobsWorker, job.id), NotFoundError);
    expect((await core.useCases.jobs.getForWorker(worker, job.id)).config_snapshot.variables.secret?.value).toBe(
      'hunter2',
    );
  });
});

describe('job lists', () => {
  it('walks every job exactly once, newest first, page after page, while jobs keep arriving', async () => {
    const created: string[] = [];
    for (let i = 0; i < 7; i++) {
      created.push((await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id })).id);
      if (i % 2 === 0) core.clock.advance(1000);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await core.useCases.jobs.list(ada, { limit: 3, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((job) => job.id));
      await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual([...created].reverse());
  });

  it('lists summaries: no inline files and no variables; the detail keeps them', async () => {
    const inline = await seedVine(core, ada, {
      source: { type: 'inline', files: { 'main.tf': 'resource "null_resource" "big" {}' } },
      variables: { region: 'eu' },
    });
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: inline.id });
    const [listed] = (await core.useCases.jobs.list(ada, { limit: 1 })).items;
    expect(listed!.id).toBe(job.id);
    expect(listed!.config_snapshot.source).toEqual({ type: 'inline', file_count: 1 });
    expect(listed!.config_snapshot).not.toHaveProperty('variables');
    const detail = await core.useCases.jobs.get(ada, job.id);
    expect(detail.config_snapshot.source).toEqual({
      type: 'inline',
      files: { 'main.tf': 'resource "null_resource" "big" {}' },
    });
    expect(detail.config_snapshot.variables).toEqual({ region: { value: 'eu', sensitive: false } });
  });
});

describe('the units of work of a creation (issue 31)', () => {
  const count = () => ({ runs: vi.spyOn(core.uow, 'run'), reads: vi.spyOn(core.uow, 'read') });

  it('a person in no organization: the vine is found, authorized and queued in one', async () => {
    const { runs, reads } = count();
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect(job).toMatchObject({ status: 'QUEUED', vine_id: vine.id, owner_id: ada.userId });
    expect(runs).toHaveBeenCalledTimes(1);
    // Their memberships (none), read once; no look-up of the vine's owner before the write.
    expect(reads).toHaveBeenCalledTimes(1);
    await expectFailure(
      core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: UNKNOWN_ID }),
      NotFoundError,
      'configuration_not_found',
    );
  });

  it("a person in an organization: the vine's owner is found first, then the job queued there", async () => {
    const org = await core.useCases.orgs.create(ada, { name: 'acme' });
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod', org_id: org.id });
    const orgVine = await seedVine(core, ada, { vineyard_id: vineyard.id });
    const { runs, reads } = count();
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: orgVine.id });
    expect(job.owner_id).toBe(org.id);
    expect(runs).toHaveBeenCalledTimes(1);
    expect(reads).toHaveBeenCalledTimes(2);
    // Their own vines too, from the same look-up.
    expect((await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id })).owner_id).toBe(
      ada.userId,
    );
  });

  it("an organization's token: one owner, so one unit of work; a missing vine is 404 and a low role 403 in it", async () => {
    const org = await core.useCases.orgs.create(ada, { name: 'acme' });
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod', org_id: org.id });
    const orgVine = await seedVine(core, ada, { vineyard_id: vineyard.id });
    const operator = await core.useCases.apiTokens.create(ada, { name: 'ci', org_id: org.id, role: 'operator' });
    const viewer = await core.useCases.apiTokens.create(ada, { name: 'ro', org_id: org.id, role: 'viewer' });
    const asOperator = await core.useCases.apiTokens.authenticate(operator.token);
    const asViewer = await core.useCases.apiTokens.authenticate(viewer.token);
    const { runs, reads } = count();
    const job = await core.useCases.jobs.create(asOperator, { job_type: 'PLAN', configuration_id: orgVine.id });
    expect(job.owner_id).toBe(org.id);
    expect(runs).toHaveBeenCalledTimes(1);
    // Its memberships came with the token.
    expect(reads).not.toHaveBeenCalled();
    // Never the token's creator's personal vines.
    await expectFailure(
      core.useCases.jobs.create(asOperator, { job_type: 'PLAN', configuration_id: vine.id }),
      NotFoundError,
      'configuration_not_found',
    );
    await expectFailure(
      core.useCases.jobs.create(asViewer, { job_type: 'PLAN', configuration_id: UNKNOWN_ID }),
      NotFoundError,
      'configuration_not_found',
    );
    const refused = await expectFailure(
      core.useCases.jobs.create(asViewer, { job_type: 'PLAN', configuration_id: orgVine.id }),
      InsufficientRoleError,
    );
    expect(refused).toMatchObject({ requiredRole: 'operator', role: 'viewer' });
    expect(
      (await core.useCases.jobs.list(ada, {})).items.filter((queued) => queued.vine_id === orgVine.id),
    ).toHaveLength(1);
  });
});
