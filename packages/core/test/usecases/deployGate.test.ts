/**
 * The deploy gate (issue 23) on the memory stores: every job that changes infrastructure passes
 * one rule. A DEPLOY without a plan where policies or an approval apply, a DESTROY without an
 * approved destroy plan where approval is required, a plan whose claimed policies have no valid
 * result, and an approval by the person whose action queued a system plan are refused; a plan's
 * `actions` say the same.
 */
import {
  ConflictError,
  ForbiddenError,
  type Job,
  type PolicyResult,
  type UserActor,
  type VineView,
  type WorkerActor,
} from '@trellis/core';
import {
  addAcceptedMember,
  createTestCore,
  FakeWebhookSender,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure, runToSuccess } from './helpers.js';

const MODULE = 'package trellis.gate\n\ndeny contains msg if {\n  input.x == 1\n  msg := "x is 1"\n}\n';

let core: TestCore;
let ada: TestUser;
let worker: WorkerActor;
let vine: VineView;

beforeEach(async () => {
  core = createTestCore({ webhooks: new FakeWebhookSender({}) });
  ada = await seedUser(core, { email: 'ada@example.test' });
  worker = await seedWorker(core, ada, { heartbeat: true });
  vine = await seedVine(core, ada);
});

const mandatory = (vineyardId: string | null = vine.vineyard_id) =>
  core.useCases.policies.create(ada, {
    name: 'gate',
    enforcement: 'mandatory',
    module: MODULE,
    ...(vineyardId ? { vineyard_id: vineyardId } : {}),
  });

async function plan(metadata: Record<string, unknown> = {}, input: { destroy?: boolean } = {}, by: UserActor = ada) {
  const queued = await core.useCases.jobs.create(by, { job_type: 'PLAN', configuration_id: vine.id, ...input });
  return runToSuccess(core, worker, queued.id, metadata);
}

const apply = (p: Job, type: 'DEPLOY' | 'DESTROY' = 'DEPLOY', by: UserActor = ada) =>
  core.useCases.jobs.create(by, { job_type: type, configuration_id: vine.id, plan_job_id: p.id });

const resultOf = (policy: { id: string; version: number }, over: Partial<PolicyResult> = {}): PolicyResult => ({
  policy_id: policy.id,
  version: policy.version,
  name: 'gate',
  enforcement: 'mandatory',
  passed: true,
  messages: [],
  ...over,
});

describe('a change without a plan', () => {
  it('a DEPLOY on a vine with a mandatory policy is refused 409 plan_required, naming what to do', async () => {
    await mandatory();
    const error = await expectFailure(
      core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id }),
      ConflictError,
      'plan_required',
    );
    expect(error.message).toContain(`plan first: \`trellis plan ${vine.name}\``);
    expect(error.message).toContain('1 mandatory policy applies');
  });

  it('an advisory policy alone, or a mandatory one of another vineyard, leaves a plain DEPLOY alone', async () => {
    await core.useCases.policies.create(ada, { name: 'advice', enforcement: 'advisory', module: MODULE });
    const elsewhere = await core.useCases.vineyards.create(ada, { name: 'elsewhere' });
    await mandatory(elsewhere.id);
    await expect(
      core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id }),
    ).resolves.toMatchObject({ job_type: 'DEPLOY', plan_job_id: null });
  });

  it('a DESTROY on a vine that requires approval is refused 409 plan_required; policies alone leave it to the agent', async () => {
    await mandatory();
    const destroy = await core.useCases.jobs.create(ada, { job_type: 'DESTROY', configuration_id: vine.id });
    // The claim of a DESTROY carries the policies, which the agent checks on its destroy plan.
    const claimed = await core.useCases.jobs.claim(worker);
    expect(claimed?.job.id).toBe(destroy.id);
    expect(claimed?.policies.map((policy) => policy.name)).toEqual(['gate']);
    expect((await core.useCases.jobs.get(ada, destroy.id)).claimed_policies).toEqual([
      { policy_id: claimed?.policies[0]?.id, version: 1, name: 'gate', enforcement: 'mandatory' },
    ]);
    await core.useCases.jobs.reportStatus(worker, destroy.id, { status: 'FAILED', error_message: 'stopped' });

    await core.useCases.drift.configure(ada, vine.id, { approval: { required: true, separate_approver: false } });
    const error = await expectFailure(
      core.useCases.jobs.create(ada, { job_type: 'DESTROY', configuration_id: vine.id }),
      ConflictError,
      'plan_required',
    );
    expect(error.message).toContain(`\`trellis plan ${vine.name} --destroy\``);
  });
});

describe('destroy plans', () => {
  it('an approved destroy plan is applied by a DESTROY, never by a DEPLOY; an ordinary plan never by a DESTROY', async () => {
    await core.useCases.drift.configure(ada, vine.id, { approval: { required: true, separate_approver: false } });
    const destroyPlan = await plan({ plan_summary: { add: 0, change: 0, destroy: 1 } }, { destroy: true });
    expect(destroyPlan.config_snapshot.destroy).toBe(true);
    await expectFailure(apply(destroyPlan, 'DEPLOY'), ConflictError, 'plan_kind_mismatch');
    await expectFailure(apply(destroyPlan, 'DESTROY'), ConflictError, 'approval_required');
    await core.useCases.planReviews.approve(ada, destroyPlan.id);
    const ordinary = await plan();
    await core.useCases.planReviews.approve(ada, ordinary.id);
    await expectFailure(apply(ordinary, 'DESTROY'), ConflictError, 'plan_kind_mismatch');

    const destroy = await apply(destroyPlan, 'DESTROY');
    expect(destroy).toMatchObject({
      job_type: 'DESTROY',
      plan_job_id: destroyPlan.id,
      config_snapshot: { destroy: true },
    });
    // Applied once.
    await expectFailure(apply(destroyPlan, 'DESTROY'), ConflictError, 'plan_already_applied');
    expect((await core.useCases.jobWaiting.show(ada, destroyPlan.id)).actions?.apply).toMatchObject({
      allowed: false,
      code: 'plan_already_applied',
    });
  });

  it('destroy is only for a PLAN', async () => {
    await expectFailure(
      core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id, destroy: true }),
      Error,
      'validation_failed',
    );
  });
});

describe('policy results fail closed', () => {
  it('the claim records the policy versions it carried; a plan lacking a result of one is policy_unchecked', async () => {
    const policy = await mandatory();
    const queued = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    const unchecked = await runToSuccess(core, worker, queued.id);
    expect(unchecked.claimed_policies).toEqual([
      { policy_id: policy.id, version: 1, name: 'gate', enforcement: 'mandatory' },
    ]);
    const error = await expectFailure(apply(unchecked), ConflictError, 'policy_unchecked');
    expect(error.message).toContain('gate (version 1)');
    expect(error.message).toContain(`plan again: \`trellis plan ${vine.name}\``);
    expect((await core.useCases.jobWaiting.show(ada, unchecked.id)).actions?.apply).toMatchObject({
      allowed: false,
      code: 'policy_unchecked',
    });

    // A result of another version, or one that calls the mandatory policy advisory, answers nothing.
    const stale = await plan({ policy_results: [resultOf(policy, { version: 7 })] });
    await expectFailure(apply(stale), ConflictError, 'policy_unchecked');
    const demoted = await plan({
      policy_results: [resultOf(policy, { enforcement: 'advisory', passed: false, messages: ['x is 1'] })],
    });
    await expectFailure(apply(demoted), ConflictError, 'policy_unchecked');

    // Planned again with a result of each: deployable.
    const checked = await plan({ policy_results: [resultOf(policy)] });
    expect((await core.useCases.jobWaiting.show(ada, checked.id)).actions?.apply).toEqual({ allowed: true });
    await expect(apply(checked)).resolves.toMatchObject({ job_type: 'DEPLOY', plan_job_id: checked.id });
  });

  it('an admin cannot override an unchecked plan into a deploy', async () => {
    const policy = await mandatory();
    const p = await plan({ policy_results: [resultOf({ id: policy.id, version: 3 }, { passed: false })] });
    await core.useCases.planReviews.override(ada, p.id, { reason: 'trust me' });
    await expectFailure(apply(p), ConflictError, 'policy_unchecked');
  });
});

describe('the separate approver of plans the system queued', () => {
  it('the person whose deploy triggered a downstream plan may not approve it; another member may, and actions say so', async () => {
    const bob = await seedUser(core, { email: 'bob@example.test' });
    const org = await core.useCases.orgs.create(ada, { name: 'platform' });
    await addAcceptedMember(core.useCases, ada, org.id, bob, 'operator');
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod', org_id: org.id });
    const source = { type: 'inline' as const, files: { 'main.tf': '' } };
    const upstream = await core.useCases.vines.create(ada, { name: 'network', vineyard_id: vineyard.id, source });
    const downstream = await core.useCases.vines.create(ada, {
      name: 'apps',
      vineyard_id: vineyard.id,
      source,
      approval: { required: true, separate_approver: true },
    });
    await core.useCases.drift.configure(ada, downstream.id, { triggers: { after: [upstream.id] } });
    const registration = await core.useCases.workers.register(ada, { name: 'pool', org_id: org.id });
    const pool = await core.useCases.workers.authenticate(registration.worker_id, registration.worker_token);

    const deploy = await core.useCases.jobs.create(bob, { job_type: 'DEPLOY', configuration_id: upstream.id });
    await runToSuccess(core, pool, deploy.id);
    const triggered = [...core.uow.snapshot().jobs.values()].find((job) => job.vine_id === downstream.id) as Job;
    expect(triggered).toMatchObject({ created_by: null, caused_by: bob.userId, trigger: { type: 'upstream' } });
    await runToSuccess(core, pool, triggered.id);

    expect((await core.useCases.jobWaiting.show(bob, triggered.id)).actions?.approve).toMatchObject({
      allowed: false,
      code: 'separate_approver_required',
    });
    await expectFailure(
      core.useCases.planReviews.approve(bob, triggered.id),
      ForbiddenError,
      'separate_approver_required',
    );
    expect((await core.useCases.jobWaiting.show(ada, triggered.id)).actions?.approve).toEqual({ allowed: true });
    await core.useCases.planReviews.approve(ada, triggered.id);
    expect((await core.useCases.jobWaiting.show(bob, triggered.id)).actions?.apply).toEqual({ allowed: true });
  });
});
