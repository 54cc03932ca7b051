/**
 * Issue 25: an agent that starts ends the jobs its old process was running; every end that leaves
 * no engine to release the state lock releases it; force-unlock is for admins; and why a job
 * waits (`waitingFor`), on the in-memory fakes.
 */
import { ConflictError, ForbiddenError, type Job, ownerScope, ValidationError, type VineView } from '@trellis/core';
import {
  addAcceptedMember,
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
import { expectFailure } from '../usecases/helpers.js';

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

const jobOf = (job: Job) => core.uow.snapshot().jobs.get(job.id);
const lockOf = (vineId = vine.id) => core.useCases.tfe.history.list(ada, vineId).then((history) => history.lock);
const lock = (who = 'tofu@host') => core.useCases.states.lock(worker, vine.id, { ID: `lock-${who}`, Who: who });

describe('an agent that starts names the jobs it runs', () => {
  it('ends the others it was thought to run at once, releasing their locks; the named ones go on', async () => {
    const kept = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    const otherVine = await seedVine(core, ada);
    const dropped = await seedRunningJob(core, ada, worker, otherVine, 'DEPLOY');
    await core.useCases.states.lock(worker, otherVine.id, { ID: 'dead', Who: 'tofu@old-process' });
    // Another agent's job is none of this agent's business.
    const other = await seedWorker(core, ada, { heartbeat: true });
    const third = await seedVine(core, ada);
    const theirs = await seedRunningJob(core, ada, other, third);

    await core.useCases.workers.heartbeat(worker, { version: '2.0.0', running_job_ids: [kept.id] });
    expect(jobOf(kept)?.status).toBe('PROCESSING');
    expect(jobOf(dropped)).toMatchObject({
      status: 'FAILED',
      error_message: 'the agent running this job restarted: the job ended with its old process',
    });
    expect(await lockOf(otherVine.id)).toBeNull();
    expect(jobOf(theirs)?.status).toBe('PROCESSING');

    // A later heartbeat without the list changes nothing.
    await core.useCases.workers.heartbeat(worker, { version: '2.0.0' });
    expect(jobOf(kept)?.status).toBe('PROCESSING');
    await core.useCases.workers.heartbeat(worker, { version: '2.0.0', running_job_ids: [] });
    expect(jobOf(kept)?.status).toBe('FAILED');
    expect((await core.useCases.workers.get(ada.userId, worker.workerId)).status).toBe('ONLINE');
  });

  it('after a claim without an answer, puts the job the agent never got back in the queue, its vine where it was', async () => {
    const kept = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    const otherVine = await seedVine(core, ada);
    const neverGot = await seedRunningJob(core, ada, worker, otherVine, 'PLAN');

    const answer = await core.useCases.workers.heartbeat(worker, {
      version: '2.0.0',
      running_job_ids: [kept.id],
      after_unanswered_claim: true,
    });
    expect(answer.lost_job_timeout_s).toBe(120);
    expect(jobOf(kept)?.status).toBe('PROCESSING');
    expect(jobOf(neverGot)).toMatchObject({
      status: 'QUEUED',
      claimed_by_worker_id: null,
      claimed_at: null,
      error_message: null,
      finished_at: null,
    });
    expect(core.uow.snapshot().vines.get(otherVine.id)?.status).toBe(otherVine.status);
    const audit = [...core.uow.snapshot().audit.values()].filter((entry) => entry.target.id === neverGot.id);
    expect(audit.map((entry) => [entry.action, entry.details.reason])).toContainEqual([
      'job.requeue',
      'claim_unanswered',
    ]);
    // It runs once, on whichever agent claims it next.
    const other = await seedWorker(core, ada, { heartbeat: true });
    expect((await core.useCases.jobs.claim(other))?.job.id).toBe(neverGot.id);
  });

  it('refuses a malformed list', async () => {
    for (const bad of ['x', ['not-a-uuid'], Array.from({ length: 257 }, () => vine.id), {}]) {
      await expectFailure(
        core.useCases.workers.heartbeat(worker, { version: '1', running_job_ids: bad }),
        ValidationError,
        'validation_failed',
      );
    }
  });
});

describe('the state lock at the end of a job', () => {
  it('a reported failure releases the lock its crashed engine left', async () => {
    const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await lock();
    await core.useCases.jobs.reportStatus(worker, job.id, { status: 'FAILED', error_message: 'tofu crashed' });
    expect(await lockOf()).toBeNull();
  });

  it("never releases a person's lock taken through the Terraform Cloud protocol", async () => {
    const job = await seedRunningJob(core, ada, worker, vine, 'PLAN');
    const info = { ID: 'tfe-1', Operation: 'TerraformCloudLock', Who: ada.email, TrellisUserId: ada.userId };
    await core.uow.run(ownerScope(ada.userId), (stores) =>
      stores.states.acquireLock({
        owner_id: ada.userId,
        vine_id: vine.id,
        lock_id: 'tfe-1',
        info,
        created_at: '2026-01-01T00:00:00.000Z',
      }),
    );
    // Its engine could not take the lock; the agent reports the failure.
    await core.useCases.jobs.reportStatus(worker, job.id, { status: 'FAILED', error_message: 'state locked' });
    expect(await lockOf()).toMatchObject({ lock_id: 'tfe-1' });
  });

  it("a person's cancel keeps an online agent's lock (its engine winds down) and releases an offline one's", async () => {
    const online = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await lock();
    await core.useCases.jobs.cancel(ada, online.id);
    expect(await lockOf()).not.toBeNull();
    // The winding-down engine releases it itself.
    await core.useCases.states.unlock(worker, vine.id, { ID: 'lock-tofu@host' });

    const offline = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await lock('tofu@killed');
    core.clock.advance({ seconds: core.settings.heartbeatTimeoutSeconds + 1 });
    await core.useCases.jobs.cancel(ada, offline.id);
    expect(await lockOf()).toBeNull();
  });
});

describe('the end report of a job cancelled while it ran', () => {
  it('is refused (409), and releases the lock its engine (killed at the end of the grace) left', async () => {
    const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await lock('tofu@killed-after-grace');
    await core.useCases.jobs.cancel(ada, job.id);
    expect(await lockOf()).not.toBeNull();
    await expectFailure(
      core.useCases.jobs.reportStatus(worker, job.id, { status: 'CANCELLED' }),
      ConflictError,
      'invalid_transition',
    );
    expect(await lockOf()).toBeNull();
  });

  it('leaves the lock when another job of the vine runs now (it may be that job’s)', async () => {
    const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await core.useCases.jobs.cancel(ada, job.id);
    const next = await seedRunningJob(core, ada, worker, vine, 'PLAN');
    await core.useCases.states.lock(worker, vine.id, { ID: 'next-engine', Who: 'tofu@next' });
    await expectFailure(core.useCases.jobs.reportStatus(worker, job.id, { status: 'CANCELLED' }), ConflictError);
    expect(await lockOf()).toMatchObject({ lock_id: 'next-engine' });
    expect(jobOf(next)?.status).toBe('PROCESSING');
  });
});

describe('force-unlock (admins)', () => {
  it('releases any lock, audited; refuses a free state and people below admin', async () => {
    const org = await core.useCases.orgs.create(ada, { name: 'platform' });
    const bob = await seedUser(core);
    await addAcceptedMember(core.useCases, ada, org.id, bob, 'operator');
    const orgWorker = await seedWorker(core, ada, { heartbeat: true });
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'shared', org_id: org.id });
    const shared = await seedVine(core, ada, { vineyard_id: vineyard.id });
    const orgAgent = await core.useCases.workers.register(ada, { name: 'org-agent', org_id: org.id });
    const agent = await core.useCases.workers.authenticate(orgAgent.worker_id, orgAgent.worker_token);
    await core.useCases.workers.heartbeat(agent, { version: '1', running_job_ids: [] });
    await seedRunningJob(core, ada, agent, shared, 'DEPLOY');
    await core.useCases.states.lock(agent, shared.id, { ID: 'left', Who: 'tofu@gone' });
    expect(orgWorker.ownerId).toBe(ada.userId);

    await expectFailure(core.useCases.tfe.history.forceUnlock(bob, shared.id), ForbiddenError);
    const unlocked = await core.useCases.tfe.history.forceUnlock(ada, shared.name);
    expect(unlocked).toMatchObject({ vine_id: shared.id, released: { lock_id: 'left' } });
    expect(await core.useCases.tfe.history.list(ada, shared.id)).toMatchObject({ lock: null });
    await expectFailure(core.useCases.tfe.history.forceUnlock(ada, shared.id), ConflictError, 'state_not_locked');
    const entries = [...core.uow.snapshot().audit.values()].filter((entry) => entry.action === 'state.force_unlock');
    expect(entries.map((entry) => [entry.target.id, entry.details])).toEqual([
      [shared.id, { lock_id: 'left', held_by: 'tofu@gone', via: 'trellis' }],
    ]);
  });
});

describe('why a job waits', () => {
  const why = (job: Job) => core.useCases.jobWaiting.show(ada, job.id).then((view) => view.waiting_for);

  it('every agent busy, the configuration busy, then nothing', async () => {
    const running = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    const elsewhere = await core.useCases.jobs.create(ada, {
      job_type: 'PLAN',
      configuration_id: (await seedVine(core, ada)).id,
    });
    expect(await why(elsewhere)).toMatchObject({ reason: 'agents_busy' });
    const behind = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect(await why(behind)).toMatchObject({ reason: 'vine_busy', job_id: running.id });
    const last = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect(await why(last)).toMatchObject({ reason: 'vine_busy', job_id: running.id });
    await core.useCases.jobs.reportStatus(worker, running.id, { status: 'SUCCESS' });
    expect(await why(last)).toMatchObject({ reason: 'vine_busy', job_id: behind.id });
    expect(await why(elsewhere)).toBeNull();
    core.clock.advance({ seconds: core.settings.heartbeatTimeoutSeconds + 1 });
    expect(await why(elsewhere)).toMatchObject({ reason: 'no_agent_online' });
    expect((await why(elsewhere))?.message).toContain('none of your agents is online');
  });

  it('a plan that must be approved before it is deployed', async () => {
    const org = await core.useCases.orgs.create(ada, { name: 'reviewed' });
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'gated', org_id: org.id });
    const gated = await seedVine(core, ada, { vineyard_id: vineyard.id });
    await core.useCases.drift.configure(ada, gated.id, { approval: { required: true } });
    const registration = await core.useCases.workers.register(ada, { name: 'gate-agent', org_id: org.id });
    const agent = await core.useCases.workers.authenticate(registration.worker_id, registration.worker_token);
    await core.useCases.workers.heartbeat(agent, { version: '1' });
    const plan = await seedRunningJob(core, ada, agent, gated, 'PLAN');
    await core.useCases.jobs.reportStatus(agent, plan.id, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 } },
    });
    expect(await why(plan)).toMatchObject({ reason: 'approval' });
    await core.useCases.planReviews.approve(ada, plan.id);
    expect(await why(plan)).toBeNull();
  });
});
