/**
 * Remote runs (issue 27) on the memory stores: the gates a run's apply passes (the vine's
 * approval, failed policies and their override, who may), the yes that waits for an approval,
 * `-auto-approve` through the lifecycle hook, a workspace made by the CLI, `trellis deploy --plan`
 * of a run's plan, and the input a run is created from.
 */
import {
  AGENT_FEATURES,
  ConflictError,
  InsufficientRoleError,
  type Job,
  NotFoundError,
  type PolicyResult,
  parseRunInput,
  runOptionsOf,
  runVariableValue,
  snapshotOfPlanNow,
  type UserActor,
  ValidationError,
  type Vine,
  type WorkerActor,
} from '@trellis/core';
import {
  addAcceptedMember,
  bodyOf,
  chunksOf,
  createTestCore,
  outboxRows,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  tarGz,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure, expectThrown, readsDuring } from '../usecases/helpers.js';

let core: TestCore;
let ada: TestUser;
let worker: WorkerActor;

const FAILED: PolicyResult = {
  policy_id: '00000000-0000-4000-8000-00000000a001',
  version: 1,
  name: 'no-public-buckets',
  enforcement: 'mandatory',
  passed: false,
  messages: ['public'],
};

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core, { email: 'ada@example.test' });
  worker = await seedWorker(core, ada, { heartbeat: true });
});

async function uploaded(ownerId: string, vineId: string): Promise<string> {
  const versions = core.useCases.configurationVersions;
  const pending = await versions.create({
    owner_id: ownerId,
    vine_id: vineId,
    source: 'upload',
    strip_components: 0,
    created_by: null,
  });
  const done = await versions.ingest(pending, chunksOf(tarGz([{ path: 'main.tf', content: 'terraform {}\n' }])));
  return `cv-${done.id}`;
}

async function queueRun(by: UserActor, vineId: string, attributes: Record<string, unknown> = {}, ownerId = by.userId) {
  return core.useCases.tfe.runs.create(by, {
    attributes,
    workspace_id: `ws-${vineId}`,
    configuration_version_id: await uploaded(ownerId, vineId),
  });
}

/** The worker claims the job and ends it successfully (a PLAN with its artifact and `metadata`). */
async function finish(jobId: string, metadata: Record<string, unknown> = {}, agent = worker): Promise<Job> {
  const claimed = await core.useCases.jobs.claim(agent, AGENT_FEATURES);
  expect(claimed?.job.id).toBe(jobId);
  if (claimed?.job.job_type === 'PLAN') await core.useCases.planArtifacts.upload(agent, jobId, bodyOf('plan'));
  return core.useCases.jobs.reportStatus(agent, jobId, {
    status: 'SUCCESS',
    execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 }, ...metadata },
  });
}

const runOf = (planJobId: string, by: UserActor = ada) => core.useCases.tfe.runs.read(by, `run-${planJobId}`);

describe('the apply of a remote run', () => {
  it('waits for the approval of an approval-required vine after a yes, and is queued once approved', async () => {
    const vine = await seedVine(core, ada, { approval: { required: true, separate_approver: false } });
    const run = await queueRun(ada, vine.id);
    await finish(run.plan.id);
    expect(await runOf(run.plan.id)).toMatchObject({
      status: 'post_plan_awaiting_decision',
      actions: { 'is-confirmable': true },
    });
    await expect(core.useCases.tfe.runs.apply(ada, `run-${run.plan.id}`)).resolves.toEqual({
      waitingForApproval: true,
    });
    expect(await runOf(run.plan.id)).toMatchObject({ status: 'confirmed', actions: { 'is-confirmable': false } });
    await expectFailure(
      core.useCases.tfe.runs.apply(ada, `run-${run.plan.id}`),
      ConflictError,
      'run_already_confirmed',
    );
    await core.useCases.planReviews.approve(ada, run.plan.id);
    const after = await runOf(run.plan.id);
    expect(after.status).toBe('apply_queued');
    expect(after.apply).toMatchObject({ job_type: 'DEPLOY', trigger: { type: 'cli' }, plan_job_id: run.plan.id });
  });

  it('auto-applies when the plan ends, waits for an override of a failed policy, and goes on after it', async () => {
    const vine = await seedVine(core, ada);
    const clean = await queueRun(ada, vine.id, { 'auto-apply': true });
    await finish(clean.plan.id);
    const applied = await runOf(clean.plan.id);
    expect(applied.status).toBe('apply_queued');
    expect(applied.apply).toMatchObject({ created_by: ada.userId, caused_by: ada.userId });
    await finish(applied.apply?.id as string);
    expect((await runOf(clean.plan.id)).status).toBe('applied');

    const failing = await queueRun(ada, vine.id, { 'auto-apply': true });
    await finish(failing.plan.id, { policy_results: [FAILED] });
    expect(await runOf(failing.plan.id)).toMatchObject({ status: 'policy_override', apply: null });
    await core.useCases.planReviews.override(ada, failing.plan.id, { reason: 'accepted risk' });
    expect((await runOf(failing.plan.id)).status).toBe('apply_queued');
  });

  it("hands the apply queued as the plan ends to the plan's agent in its report's answer (claim_next, issue 31)", async () => {
    const vine = await seedVine(core, ada);
    const other = await seedWorker(core, ada, { heartbeat: true });
    const run = await queueRun(ada, vine.id, { 'auto-apply': true });
    expect((await core.useCases.jobs.claim(worker, AGENT_FEATURES))?.job.id).toBe(run.plan.id);
    await core.useCases.planArtifacts.upload(worker, run.plan.id, bodyOf('plan'));
    const { job, next, claimError } = await core.useCases.jobs.reportStatusAndClaim(
      worker,
      run.plan.id,
      { status: 'SUCCESS', execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 } } },
      AGENT_FEATURES,
    );
    expect([job.status, claimError]).toEqual(['SUCCESS', null]);
    expect(next?.job).toMatchObject({
      job_type: 'DEPLOY',
      plan_job_id: run.plan.id,
      status: 'PROCESSING',
      claimed_by_worker_id: worker.workerId,
    });
    expect((await runOf(run.plan.id)).apply?.id).toBe(next?.job.id);
    expect(await core.useCases.jobs.claim(other, AGENT_FEATURES)).toBeNull();
  });

  it('reads the plan and its vine once in the report that ends it and queues its apply (issue 31)', async () => {
    const vine = await seedVine(core, ada);
    const run = await queueRun(ada, vine.id, { 'auto-apply': true });
    await core.useCases.jobs.claim(worker, AGENT_FEATURES);
    await core.useCases.planArtifacts.upload(worker, run.plan.id, bodyOf('plan'));
    let ended: Job | undefined;
    const reads = await readsDuring(core, { jobs: ['get', 'getForUpdate'], vines: ['get'] }, async () => {
      ended = await core.useCases.jobs.reportStatus(worker, run.plan.id, {
        status: 'SUCCESS',
        execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 } },
      });
    });
    expect(ended?.status).toBe('SUCCESS');
    const apply = (await runOf(run.plan.id)).apply;
    expect(apply?.job_type).toBe('DEPLOY');
    // The deploy gate, the offer to the plan's agent and the hooks take what the report read.
    expect(reads).toEqual([`jobs.get ${run.plan.id}`, `vines.get ${vine.id}`]);
    expect((await core.useCases.jobs.claim(worker, AGENT_FEATURES))?.job.id).toBe(apply?.id);
  });

  it('keeps a final report whose claim fails after it, and answers that claim as none', async () => {
    const vine = await seedVine(core, ada);
    const run = await queueRun(ada, vine.id);
    await core.useCases.jobs.claim(worker, AGENT_FEATURES);
    await core.useCases.planArtifacts.upload(worker, run.plan.id, bodyOf('plan'));
    const broken = new Error('the database went away');
    core.uow.wrapStores = (stores) =>
      new Proxy(stores, {
        get: (target, name) =>
          name === 'jobs'
            ? new Proxy(target.jobs, {
                get: (jobs, method) =>
                  method === 'claimNext'
                    ? async () => {
                        throw broken;
                      }
                    : Reflect.get(jobs, method),
              })
            : Reflect.get(target, name),
      });
    const { job, next, claimError } = await core.useCases.jobs.reportStatusAndClaim(
      worker,
      run.plan.id,
      { status: 'SUCCESS', execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 } } },
      AGENT_FEATURES,
    );
    core.uow.wrapStores = undefined;
    expect([job.status, next, claimError]).toEqual(['SUCCESS', null, broken]);
    expect((await runOf(run.plan.id)).status).toBe('planned');
  });

  it("offers the apply queued as the plan ends to the plan's agent first (issue 31)", async () => {
    const vine = await seedVine(core, ada);
    const other = await seedWorker(core, ada, { heartbeat: true });
    const run = await queueRun(ada, vine.id, { 'auto-apply': true });
    await finish(run.plan.id);
    const apply = (await runOf(run.plan.id)).apply;
    expect(apply?.job_type).toBe('DEPLOY');
    expect(await core.useCases.jobs.claim(other, AGENT_FEATURES)).toBeNull();
    expect((await core.useCases.jobs.claim(worker, AGENT_FEATURES))?.job.id).toBe(apply?.id);
  });

  it('needs jobs.run: a viewer reads runs but neither queues nor applies one', async () => {
    const org = await core.useCases.orgs.create(ada, { name: 'platform' });
    const viewer = await seedUser(core, { email: 'vi@example.test' });
    await addAcceptedMember(core.useCases, ada, org.id, viewer, 'viewer');
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod', org_id: org.id });
    const vine = await core.useCases.vines.create(ada, {
      name: 'shared',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': '' } },
    });
    await expectFailure(queueRun(viewer, vine.id, {}, org.id), InsufficientRoleError);
    const registration = await core.useCases.workers.register(ada, { name: 'pool', org_id: org.id });
    const pool = await core.useCases.workers.authenticate(registration.worker_id, registration.worker_token);
    const run = await queueRun(ada, vine.id, {}, org.id);
    await finish(run.plan.id, {}, pool);
    const seen = await runOf(run.plan.id, viewer);
    expect(seen).toMatchObject({
      status: 'planned',
      actions: { 'is-confirmable': false },
      permissions: { 'can-apply': false, 'can-discard': false },
    });
    await expectFailure(core.useCases.tfe.runs.apply(viewer, `run-${run.plan.id}`), InsufficientRoleError);
    const stranger = await seedUser(core, { email: 'st@example.test' });
    await expectFailure(core.useCases.tfe.runs.read(stranger, `run-${run.plan.id}`), NotFoundError, 'run_not_found');
    await expectFailure(core.useCases.tfe.runs.apply(ada, 'run-xyz'), NotFoundError, 'run_not_found');
  });

  it('runs on a workspace the CLI made, and its plan deploys through `trellis deploy --plan` too', async () => {
    const ws = await core.useCases.tfe.workspaces.create(ada, `u-${ada.userId.replaceAll('-', '').slice(0, 12)}`, {
      name: 'from-cli',
    });
    // Without an upload, a Trellis job of it is refused: it has no configuration here.
    await expectFailure(
      core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: ws.vine.id }),
      ConflictError,
      'configuration_missing',
    );
    const run = await queueRun(ada, ws.vine.id, { 'is-destroy': true });
    expect(run.plan.config_snapshot.destroy).toBe(true);
    await finish(run.plan.id);
    await expectFailure(
      core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: ws.vine.id, plan_job_id: run.plan.id }),
      ConflictError,
      'plan_kind_mismatch',
    );
    const destroy = await core.useCases.jobs.create(ada, {
      job_type: 'DESTROY',
      configuration_id: ws.vine.id,
      plan_job_id: run.plan.id,
    });
    expect(destroy).toMatchObject({ job_type: 'DESTROY', plan_job_id: run.plan.id });
    expect((await runOf(run.plan.id)).status).toBe('apply_queued');
  });

  it('refuses a destroy run where the workspace allows no destroy plan, and plan-only runs are never applied', async () => {
    const vine = await seedVine(core, ada);
    await core.useCases.tfe.workspaces.update(
      ada,
      { id: `ws-${vine.id}` },
      { settings: { 'allow-destroy-plan': false } },
    );
    await expectFailure(queueRun(ada, vine.id, { 'is-destroy': true }), ConflictError, 'destroy_plan_not_allowed');
    const speculative = await queueRun(ada, vine.id, { 'plan-only': true });
    await finish(speculative.plan.id);
    expect((await runOf(speculative.plan.id)).status).toBe('planned_and_finished');
    await expectFailure(
      core.useCases.tfe.runs.apply(ada, `run-${speculative.plan.id}`),
      ConflictError,
      'run_plan_only',
    );
  });
});

describe('plan.needs_approval of remote runs', () => {
  it('asks for the approval of a run that may be applied, never of a plan-only run', async () => {
    await core.useCases.notifications.create(ada, {
      name: 'reviewers',
      kind: 'slack',
      url: 'https://hooks.example.com/trellis',
      events: ['plan.needs_approval'],
    });
    const vine = await seedVine(core, ada, { approval: { required: true, separate_approver: false } });
    const events = () => outboxRows(core.uow.snapshot(), 'notification').map((delivery) => delivery.payload.job);
    const speculative = await queueRun(ada, vine.id, { 'plan-only': true });
    await finish(speculative.plan.id);
    expect(events()).toEqual([]);
    const run = await queueRun(ada, vine.id);
    await finish(run.plan.id);
    expect(events()).toMatchObject([{ id: run.plan.id }]);
  });
});

describe('the configuration a plan of a remote run compares with', () => {
  it('is the vine now with the upload, the run options and the values of the run variables', async () => {
    const vine = await seedVine(core, ada, { variables: { size: { value: 'small', sensitive: false } } });
    const run = await queueRun(ada, vine.id, {
      variables: [{ key: 'region', value: '"eu"' }],
      'replace-addrs': ['null_resource.a'],
    });
    const now = (await core.uow.run({ kind: 'owner', ownerId: ada.userId }, (stores) =>
      stores.vines.get(ada.userId, vine.id),
    )) as Vine;
    expect(snapshotOfPlanNow(now, run.plan)).toEqual(run.plan.config_snapshot);
    const changed: Vine = { ...now, variables: { ...now.variables, size: { value: 'large', sensitive: false } } };
    expect(snapshotOfPlanNow(changed, run.plan)).not.toEqual(run.plan.config_snapshot);
    // A run variable the vine now also has keeps the run's value.
    const shadowed: Vine = { ...now, variables: { ...now.variables, region: { value: 'us', sensitive: false } } };
    expect(snapshotOfPlanNow(shadowed, run.plan).variables.region).toEqual({ value: 'eu', sensitive: true });
  });
});

describe('the input of POST /runs', () => {
  it('reads go-tfe attributes into the run and its engine options', () => {
    const parsed = parseRunInput({
      'is-destroy': false,
      refresh: false,
      'target-addrs': ['a.b', 'a.b', 'module.m["k"].c'],
      'replace-addrs': ['x.y'],
      variables: [
        { key: 'name', value: '"web"' },
        { key: 'count', value: '3' },
        { key: 'tags', value: '{ a = "b" }' },
      ],
      'auto-apply': true,
      message: 'hi',
    });
    expect(parsed).toMatchObject({ message: 'hi', auto_apply: true, refresh: false, plan_only: false });
    expect(parsed.target_addrs).toEqual(['a.b', 'module.m["k"].c']);
    expect(parsed.variables).toEqual({
      name: { value: 'web', sensitive: true },
      count: { value: '3', sensitive: true },
      tags: { value: '{ a = "b" }', sensitive: true },
    });
    expect(runOptionsOf(parsed)).toEqual({
      target: ['a.b', 'module.m["k"].c'],
      replace: ['x.y'],
      refresh: false,
      variables: ['count', 'name', 'tags'],
    });
    expect(runOptionsOf(parseRunInput({}))).toBeUndefined();
    expect(parseRunInput({ 'auto-apply': null }).auto_apply).toBeNull();
    expect(runOptionsOf(parseRunInput({ 'refresh-only': true }))).toEqual({ refresh_only: true });
  });

  it('refuses what the engine cannot run', () => {
    expectThrown(() => parseRunInput({ 'is-destroy': true, 'refresh-only': true }), ValidationError);
    expectThrown(() => parseRunInput({ 'refresh-only': true, refresh: false }), ValidationError);
    expectThrown(() => parseRunInput({ 'target-addrs': 'a.b' }), ValidationError);
    expectThrown(() => parseRunInput({ 'target-addrs': ['a\nb'] }), ValidationError);
    expectThrown(() => parseRunInput({ variables: [{ key: '1bad', value: '1' }] }), ValidationError);
    expectThrown(() => parseRunInput({ variables: [{ key: 'ok', value: 1 }] }), ValidationError);
    expectThrown(() => parseRunInput({ 'plan-only': 'yes' }), ValidationError);
  });

  it('takes an HCL value as a vine keeps one', () => {
    expect(runVariableValue('"a \\"quoted\\" word"')).toBe('a "quoted" word');
    expect(runVariableValue('true')).toBe('true');
    expect(runVariableValue(' 1.5 ')).toBe('1.5');
    expect(runVariableValue('["a", "b"]')).toBe('["a", "b"]');
    expect(runVariableValue('var.x')).toBe('var.x');
  });
});
