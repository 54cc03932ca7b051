/**
 * Approvals, rejections and overrides of plans, and the deploy gate that reads them (issue 15),
 * on the memory stores: every rule of the gate, who may decide, the separate approver, stale
 * plans, decisions taken once, the audit entries and the `plan.needs_approval` notification.
 */
import {
  ConflictError,
  ForbiddenError,
  type Job,
  NotFoundError,
  type PolicyResult,
  PolicyFailedError,
  type UserActor,
  ValidationError,
  type VineView,
  type WorkerActor,
} from '@trellis/core';
import {
  addAcceptedMember,
  bodyOf,
  createTestCore,
  FakeWebhookSender,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  outboxRows,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure, runToSuccess } from '../usecases/helpers.js';

let core: TestCore;
let ada: TestUser;
let worker: WorkerActor;
let vine: VineView;

const MANDATORY_FAIL: PolicyResult = {
  policy_id: '00000000-0000-4000-8000-00000000a001',
  version: 2,
  name: 'no-public-buckets',
  enforcement: 'mandatory',
  passed: false,
  messages: ['aws_s3_bucket.logs is public'],
};
const ADVISORY_FAIL: PolicyResult = {
  policy_id: '00000000-0000-4000-8000-00000000a002',
  version: 1,
  name: 'small-instances',
  enforcement: 'advisory',
  passed: false,
  messages: ['aws_instance.big is larger than t3.large'],
};
const MANDATORY_PASS: PolicyResult = { ...MANDATORY_FAIL, name: 'tags', passed: true, messages: [] };

beforeEach(async () => {
  core = createTestCore({ webhooks: new FakeWebhookSender({}) });
  ada = await seedUser(core, { email: 'ada@example.test' });
  worker = await seedWorker(core, ada, { heartbeat: true });
  vine = await seedVine(core, ada);
});

/** A PLAN of `target` queued by `by`, run by `agent` to SUCCESS with its artifact and `metadata`. */
async function plan(
  options: { by?: UserActor; agent?: WorkerActor; target?: { id: string }; metadata?: Record<string, unknown> } = {},
): Promise<Job> {
  const by = options.by ?? ada;
  const agent = options.agent ?? worker;
  const queued = await core.useCases.jobs.create(by, {
    job_type: 'PLAN',
    configuration_id: (options.target ?? vine).id,
  });
  return runToSuccess(core, agent, queued.id, options.metadata);
}

const deployOf = (p: Job, by: UserActor = ada) =>
  core.useCases.jobs.create(by, { job_type: 'DEPLOY', configuration_id: p.vine_id, plan_job_id: p.id });

const requireApproval = (separate = false, by: UserActor = ada, target: { id: string } = vine) =>
  core.useCases.drift.configure(by, target.id, { approval: { required: true, separate_approver: separate } });

const auditActions = () => [...core.uow.snapshot().audit.values()].map((entry) => entry.action);

describe('the deploy gate: policies', () => {
  it('refuses a plan with a failed mandatory policy (409 policy_failed with names and messages)', async () => {
    const p = await plan({ metadata: { policy_results: [MANDATORY_FAIL, ADVISORY_FAIL, MANDATORY_PASS] } });
    const error = await expectFailure(deployOf(p), PolicyFailedError, 'policy_failed');
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.failedPolicies).toEqual([
      {
        policy_id: MANDATORY_FAIL.policy_id,
        version: 2,
        name: 'no-public-buckets',
        messages: ['aws_s3_bucket.logs is public'],
      },
    ]);
    expect(error.message).toContain('aws_s3_bucket.logs is public');
  });

  it('lets advisory failures through', async () => {
    const p = await plan({ metadata: { policy_results: [ADVISORY_FAIL, MANDATORY_PASS] } });
    await expect(deployOf(p)).resolves.toMatchObject({ job_type: 'DEPLOY', plan_job_id: p.id });
  });

  it('deploys an overridden plan; the override is recorded on the plan and audited', async () => {
    const p = await plan({ metadata: { policy_results: [MANDATORY_FAIL] } });
    const overridden = await core.useCases.planReviews.override(ada, p.id, {
      reason: '  logs bucket is public by design ',
    });
    expect(overridden.policy_override).toEqual({
      user_id: ada.userId,
      email: 'ada@example.test',
      at: core.clock.now().toISOString(),
      reason: 'logs bucket is public by design',
    });
    expect(core.uow.snapshot().jobs.get(p.id)?.policy_override?.reason).toBe('logs bucket is public by design');
    const audit = [...core.uow.snapshot().audit.values()].find((entry) => entry.action === 'plan.override');
    expect(audit).toMatchObject({
      target: { type: 'job', id: p.id },
      details: { reason: 'logs bucket is public by design', policies: 'no-public-buckets' },
    });
    await expect(deployOf(p)).resolves.toMatchObject({ plan_job_id: p.id });
  });

  it('refuses an override without failed mandatory policies, twice, or without a reason', async () => {
    const clean = await plan({ metadata: { policy_results: [ADVISORY_FAIL] } });
    await expectFailure(
      core.useCases.planReviews.override(ada, clean.id, { reason: 'why not' }),
      ConflictError,
      'no_failed_policies',
    );
    const p = await plan({ metadata: { policy_results: [MANDATORY_FAIL] } });
    await expectFailure(core.useCases.planReviews.override(ada, p.id, { reason: ' ' }), ValidationError);
    await expectFailure(core.useCases.planReviews.override(ada, p.id, {}), ValidationError);
    await core.useCases.planReviews.override(ada, p.id, { reason: 'accepted risk' });
    await expectFailure(
      core.useCases.planReviews.override(ada, p.id, { reason: 'again' }),
      ConflictError,
      'plan_already_overridden',
    );
  });
});

describe('the deploy gate: approvals', () => {
  it('a vine that requires approval deploys only an approved plan', async () => {
    const set = await requireApproval();
    expect(set.approval).toEqual({ required: true, separate_approver: false });
    const p = await plan();
    await expectFailure(deployOf(p), ConflictError, 'approval_required');
    const approved = await core.useCases.planReviews.approve(ada, p.id, { comment: 'looks right' });
    expect(approved.approval).toMatchObject({ decision: 'approved', comment: 'looks right', user_id: ada.userId });
    await expect(deployOf(p)).resolves.toMatchObject({ plan_job_id: p.id });
    expect(auditActions()).toContain('plan.approve');
  });

  it('a vine that requires approval refuses a DEPLOY without a plan (409 plan_required)', async () => {
    await requireApproval();
    await expectFailure(
      core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id }),
      ConflictError,
      'plan_required',
    );
    // Turned off, the plain DEPLOY is queued again.
    const off = await core.useCases.drift.configure(ada, vine.id, { approval: null });
    expect(off.approval).toBeNull();
    await expect(
      core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id }),
    ).resolves.toMatchObject({ job_type: 'DEPLOY' });
  });

  it('without the setting, a plan deploys unapproved; an approval is still recorded', async () => {
    const p = await plan();
    await core.useCases.planReviews.approve(ada, p.id);
    expect(core.uow.snapshot().jobs.get(p.id)?.approval?.comment).toBeNull();
    await expect(deployOf(p)).resolves.toMatchObject({ plan_job_id: p.id });
  });

  it('both gates hold: an approved plan with a failed mandatory policy still needs the override', async () => {
    await requireApproval();
    const p = await plan({ metadata: { policy_results: [MANDATORY_FAIL] } });
    await core.useCases.planReviews.approve(ada, p.id);
    await expectFailure(deployOf(p), PolicyFailedError, 'policy_failed');
    await core.useCases.planReviews.override(ada, p.id, { reason: 'accepted' });
    await expect(deployOf(p)).resolves.toMatchObject({ plan_job_id: p.id });
  });

  it('a rejection ends the plan’s path to deploy, with or without the setting', async () => {
    const p = await plan();
    await expectFailure(core.useCases.planReviews.reject(ada, p.id, {}), ValidationError);
    const rejected = await core.useCases.planReviews.reject(ada, p.id, { comment: 'wrong region' });
    expect(rejected.approval).toMatchObject({ decision: 'rejected', comment: 'wrong region' });
    const error = await expectFailure(deployOf(p), ConflictError, 'plan_rejected');
    expect(error.message).toContain('wrong region');
    await expectFailure(core.useCases.planReviews.approve(ada, p.id), ConflictError, 'plan_already_decided');
    expect(auditActions()).toContain('plan.reject');
  });

  it('decides a plan once: approving twice, or rejecting an approved plan, is 409', async () => {
    const p = await plan();
    await core.useCases.planReviews.approve(ada, p.id);
    await expectFailure(core.useCases.planReviews.approve(ada, p.id), ConflictError, 'plan_already_decided');
    await expectFailure(
      core.useCases.planReviews.reject(ada, p.id, { comment: 'no' }),
      ConflictError,
      'plan_already_decided',
    );
  });

  it('refuses to approve a stale plan (the configuration changed since)', async () => {
    const p = await plan();
    await core.uow.modify((state) => {
      state.vines.get(vine.id)!.variables = { region: { value: 'us', sensitive: false } };
    });
    await expectFailure(core.useCases.planReviews.approve(ada, p.id), ConflictError, 'plan_stale');
    expect(core.uow.snapshot().jobs.get(p.id)?.approval).toBeNull();
  });

  it('approves only a successful PLAN that is not a drift check nor applied', async () => {
    const queued = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    await expectFailure(core.useCases.planReviews.approve(ada, queued.id), ConflictError, 'plan_not_ready');
    await core.useCases.jobs.cancel(ada, queued.id);
    const deploy = await core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id });
    await expectFailure(core.useCases.planReviews.approve(ada, deploy.id), ConflictError, 'not_a_plan_job');
    await core.useCases.jobs.cancel(ada, deploy.id);
    await core.uow.modify((state) => {
      state.vines.get(vine.id)!.status = 'DEPLOYED';
    });
    const check = await core.useCases.drift.checkNow(ada, vine.id);
    await core.useCases.jobs.claim(worker);
    await core.useCases.jobs.reportStatus(worker, check.id, { status: 'SUCCESS' });
    await expectFailure(core.useCases.planReviews.approve(ada, check.id), ConflictError, 'plan_speculative');
    const p = await plan();
    await deployOf(p);
    await expectFailure(core.useCases.planReviews.approve(ada, p.id), ConflictError, 'plan_already_applied');
  });

  it('with a separate approver, the person who queued the plan cannot approve it (403); another can', async () => {
    const bob = await seedUser(core, { email: 'bob@example.test' });
    const org = await core.useCases.orgs.create(ada, { name: 'platform' });
    await addAcceptedMember(core.useCases, ada, org.id, bob, 'operator');
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod', org_id: org.id });
    const shared = await core.useCases.vines.create(ada, {
      name: 'shared',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': '' } },
      approval: { required: true, separate_approver: true },
    });
    expect(shared.approval).toEqual({ required: true, separate_approver: true });
    const registration = await core.useCases.workers.register(ada, { name: 'pool', org_id: org.id });
    const pool = await core.useCases.workers.authenticate(registration.worker_id, registration.worker_token);
    const p = await plan({ by: bob, agent: pool, target: shared });
    expect(p.created_by).toBe(bob.userId);
    await expectFailure(core.useCases.planReviews.approve(bob, p.id), ForbiddenError, 'separate_approver_required');
    await core.useCases.planReviews.approve(ada, p.id);
    await expect(deployOf(p, bob)).resolves.toMatchObject({ plan_job_id: p.id });
  });
});

describe('who may decide, in an organization', () => {
  async function orgWithMembers() {
    const org = await core.useCases.orgs.create(ada, { name: 'platform' });
    const members: Record<string, TestUser> = {};
    for (const role of ['viewer', 'operator', 'admin'] as const) {
      members[role] = await seedUser(core, { email: `${role}@example.test` });
      await addAcceptedMember(core.useCases, ada, org.id, members[role], role);
    }
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod', org_id: org.id });
    const shared = await core.useCases.vines.create(ada, {
      name: 'shared',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': '' } },
    });
    const registration = await core.useCases.workers.register(ada, { name: 'pool', org_id: org.id });
    const pool = await core.useCases.workers.authenticate(registration.worker_id, registration.worker_token);
    return { members: members as Record<'viewer' | 'operator' | 'admin', TestUser>, shared, pool };
  }

  it('operators approve and reject; viewers cannot (403 insufficient_role)', async () => {
    const { members, shared, pool } = await orgWithMembers();
    const first = await plan({ agent: pool, target: shared });
    await expectFailure(
      core.useCases.planReviews.approve(members.viewer, first.id),
      ForbiddenError,
      'insufficient_role',
    );
    await expectFailure(
      core.useCases.planReviews.reject(members.viewer, first.id, { comment: 'no' }),
      ForbiddenError,
      'insufficient_role',
    );
    await expect(core.useCases.planReviews.approve(members.operator, first.id)).resolves.toMatchObject({
      approval: { decision: 'approved', user_id: members.operator.userId },
    });
    const second = await plan({ agent: pool, target: shared });
    await expect(
      core.useCases.planReviews.reject(members.operator, second.id, { comment: 'no' }),
    ).resolves.toMatchObject({ approval: { decision: 'rejected' } });
  });

  it('admins and owners override; operators cannot (403 insufficient_role)', async () => {
    const { members, shared, pool } = await orgWithMembers();
    const p = await plan({ agent: pool, target: shared, metadata: { policy_results: [MANDATORY_FAIL] } });
    const error = await expectFailure(
      core.useCases.planReviews.override(members.operator, p.id, { reason: 'please' }),
      ForbiddenError,
      'insufficient_role',
    );
    expect(error).toMatchObject({ requiredRole: 'admin', role: 'operator' });
    await expect(
      core.useCases.planReviews.override(members.admin, p.id, { reason: 'accepted' }),
    ).resolves.toMatchObject({ policy_override: { user_id: members.admin.userId, reason: 'accepted' } });
  });

  it('another person sees nothing (404)', async () => {
    const eve = await seedUser(core);
    const p = await plan();
    await expectFailure(core.useCases.planReviews.approve(eve, p.id), NotFoundError, 'job_not_found');
  });
});

describe('plan.needs_approval', () => {
  async function subscribe() {
    await core.useCases.notifications.create(ada, {
      name: 'reviewers',
      kind: 'slack',
      url: 'https://hooks.example.com/trellis',
      events: ['plan.needs_approval'],
    });
  }
  const events = () => outboxRows(core.uow.snapshot(), 'notification').map((delivery) => delivery.event);

  it('is enqueued when a plan of an approval-required vine succeeds with changes', async () => {
    await subscribe();
    await requireApproval();
    const p = await plan();
    const deliveries = outboxRows(core.uow.snapshot(), 'notification');
    expect(deliveries.map((delivery) => delivery.event)).toEqual(['plan.needs_approval']);
    expect(deliveries[0]?.payload).toMatchObject({ event: 'plan.needs_approval', job: { id: p.id } });
  });

  it('is enqueued for a plan queued by a run trigger, which its cause may not approve where one must differ', async () => {
    await subscribe();
    const downstream = await seedVine(core, ada);
    await core.useCases.drift.configure(ada, downstream.id, { triggers: { after: [vine.id] } });
    await requireApproval(true, ada, downstream);
    const deploy = await core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id });
    await core.useCases.jobs.claim(worker);
    await core.useCases.jobs.reportStatus(worker, deploy.id, { status: 'SUCCESS' });
    const triggered = [...core.uow.snapshot().jobs.values()].find((job) => job.vine_id === downstream.id);
    expect(triggered).toMatchObject({
      job_type: 'PLAN',
      created_by: null,
      caused_by: ada.userId,
      trigger: { type: 'upstream' },
    });
    await core.useCases.jobs.claim(worker);
    await core.useCases.planArtifacts.upload(worker, triggered!.id, bodyOf('plan-bytes'));
    await core.useCases.jobs.reportStatus(worker, triggered!.id, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 0, change: 1, destroy: 0 } },
    });
    expect(events()).toEqual(['plan.needs_approval']);
    // No person queued it, but Ada's deploy caused it (issue 23): she may not approve it.
    await expectFailure(
      core.useCases.planReviews.approve(ada, triggered!.id),
      ForbiddenError,
      'separate_approver_required',
    );
    // (deployGate.test.ts: another member of the organization approves such a plan.)
  });

  it('is not enqueued for a plan without changes, nor for a vine without the setting', async () => {
    await subscribe();
    await plan();
    await requireApproval();
    await plan({ metadata: { plan_summary: { add: 0, change: 0, destroy: 0 } } });
    expect(events()).toEqual([]);
  });
});
