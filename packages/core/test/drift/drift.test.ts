import {
  createJobLifecycle,
  ConflictError,
  DriftUseCases,
  ForbiddenError,
  NotFoundError,
  type Job,
  ValidationError,
  type VineView,
} from '@trellis/core';
import {
  addAcceptedMember,
  createTestCore,
  FakeWebhookSender,
  seedRunningJob,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  type TestWorker,
  outboxRows,
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

const storedVine = (id = vine.id) => core.uow.snapshot().vines.get(id)!;
const jobsOf = (id = vine.id) => [...core.uow.snapshot().jobs.values()].filter((job) => job.vine_id === id);
const driftJobs = (id = vine.id) => jobsOf(id).filter((job) => job.trigger.type === 'drift');

async function deploy(target: { id: string } = vine): Promise<Job> {
  const job = await seedRunningJob(core, ada, worker, target, 'DEPLOY');
  return core.useCases.jobs.reportStatus(worker, job.id, { status: 'SUCCESS' });
}

/** Claims the next job (it must be `job`) and reports it as the agent would. */
async function run(job: Job, report: Record<string, unknown>): Promise<Job> {
  const claimed = await core.useCases.jobs.claim(worker);
  expect(claimed?.job.id).toBe(job.id);
  return core.useCases.jobs.reportStatus(worker, job.id, report as { status: unknown });
}

describe('drift settings (PATCH /api/cli/configurations/{id})', () => {
  it('sets and clears the schedule, 60 to 10080 minutes', async () => {
    const set = await core.useCases.drift.configure(ada, vine.id, { drift_detection: { interval_minutes: 60 } });
    expect(set.drift_detection).toEqual({ interval_minutes: 60 });
    expect(set.next_drift_check_at).toBe('2026-01-01T01:00:00.000Z');
    for (const bad of [59, 10081, 61.5, '60', {}]) {
      await expectFailure(
        core.useCases.drift.configure(ada, vine.id, { drift_detection: { interval_minutes: bad } }),
        ValidationError,
      );
    }
    const off = await core.useCases.drift.configure(ada, vine.name, { drift_detection: null });
    expect(off).toMatchObject({ drift_detection: null, next_drift_check_at: null });
  });

  it("another person cannot see or change a vine's settings (404)", async () => {
    const bob = await seedUser(core);
    await expectFailure(
      core.useCases.drift.configure(bob, vine.id, { drift_detection: { interval_minutes: 60 } }),
      NotFoundError,
      'configuration_not_found',
    );
    await expectFailure(core.useCases.drift.checkNow(bob, vine.id), NotFoundError, 'configuration_not_found');
    expect(storedVine().drift_detection).toBeNull();
  });
});

describe('in an organization', () => {
  it('settings need an admin (vineyards.manage); an operator may check drift (jobs.run)', async () => {
    const bob = await seedUser(core);
    const org = await core.useCases.orgs.create(ada, { name: 'platform' });
    await addAcceptedMember(core.useCases, ada, org.id, bob, 'operator');
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod', org_id: org.id });
    const shared = await core.useCases.vines.create(ada, {
      name: 'shared',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': '' } },
    });
    await expectFailure(
      core.useCases.drift.configure(bob, shared.id, { drift_detection: { interval_minutes: 60 } }),
      ForbiddenError,
      'insufficient_role',
    );
    // The operator gets past authorization: the refusal is about the vine, not the role.
    await expectFailure(core.useCases.drift.checkNow(bob, shared.id), ConflictError, 'configuration_not_deployed');
    const set = await core.useCases.drift.configure(ada, shared.id, { drift_detection: { interval_minutes: 60 } });
    expect(set.drift_detection).toEqual({ interval_minutes: 60 });
  });
});

describe('the drift scheduler (queueDue, fake clock)', () => {
  it('queues a check when due, not before, once, and a restart neither skips nor doubles', async () => {
    await deploy();
    await core.useCases.drift.configure(ada, vine.id, { drift_detection: { interval_minutes: 120 } });
    core.clock.advance({ minutes: 119 });
    expect(await core.useCases.drift.queueDue()).toEqual([]);
    core.clock.advance({ minutes: 1 });
    const [first, ...more] = await core.useCases.drift.queueDue();
    expect(more).toEqual([]);
    expect(first).toMatchObject({ job_type: 'PLAN', status: 'QUEUED', trigger: { type: 'drift' }, vine_id: vine.id });
    // A second replica (or this one again) at the same moment finds nothing due.
    expect(await new DriftUseCases(core.deps, createJobLifecycle(core.deps)).queueDue()).toEqual([]);
    expect(storedVine().next_drift_check_at).toBe('2026-01-01T04:00:00.000Z');
    await run(first as Job, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 0, change: 0, destroy: 0 } },
    });

    // Down for three intervals: the restarted scheduler queues the missed check once, not three times.
    core.clock.advance({ hours: 8 });
    const restarted = new DriftUseCases(core.deps, createJobLifecycle(core.deps));
    expect(await restarted.queueDue()).toHaveLength(1);
    expect(await restarted.queueDue()).toEqual([]);
    expect(driftJobs()).toHaveLength(2);
    expect(storedVine().next_drift_check_at).toBe('2026-01-01T12:00:00.000Z');
  });

  it('skips a vine that is not DEPLOYED or not idle, and checks it an interval later', async () => {
    await core.useCases.drift.configure(ada, vine.id, { drift_detection: { interval_minutes: 60 } });
    core.clock.advance({ minutes: 60 });
    expect(await core.useCases.drift.queueDue()).toEqual([]);
    expect(storedVine().next_drift_check_at).toBe('2026-01-01T02:00:00.000Z');
    await deploy();
    await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    core.clock.advance({ minutes: 60 });
    expect(await core.useCases.drift.queueDue()).toEqual([]);
    expect(driftJobs()).toEqual([]);
  });

  it('records in_sync, drifted, and unknown with the error of a failed check; the vine stays DEPLOYED', async () => {
    await deploy();
    const inSync = await core.useCases.drift.checkNow(ada, vine.id);
    expect(inSync.trigger).toEqual({ type: 'drift' });
    await run(inSync, { status: 'PROCESSING' });
    expect(storedVine().status).toBe('DEPLOYED');
    await core.useCases.jobs.reportStatus(worker, inSync.id, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 0, change: 0, destroy: 0 } },
    });
    expect(storedVine()).toMatchObject({
      status: 'DEPLOYED',
      drift: { status: 'in_sync', job_id: inSync.id, changes: { add: 0, change: 0, destroy: 0 } },
    });

    const drifted = await core.useCases.drift.checkNow(ada, vine.name);
    await run(drifted, { status: 'SUCCESS', execution_metadata: { plan_summary: { add: 1, change: 2, destroy: 0 } } });
    expect(storedVine().drift).toMatchObject({ status: 'drifted', changes: { add: 1, change: 2, destroy: 0 } });

    const failed = await core.useCases.drift.checkNow(ada, vine.id);
    await run(failed, { status: 'FAILED', error_message: 'provider credentials expired' });
    expect(storedVine()).toMatchObject({
      status: 'DEPLOYED',
      drift: { status: 'unknown', job_id: failed.id, changes: null, error: 'provider credentials expired' },
    });
  });

  it('a drift check whose agent is lost is unknown with the reason', async () => {
    await deploy();
    const check = await core.useCases.drift.checkNow(ada, vine.id);
    await run(check, { status: 'PROCESSING' });
    core.clock.advance({ seconds: core.settings.lostJobTimeoutSeconds + 1 });
    expect((await core.useCases.jobs.sweepLostJobs()).map((job) => job.id)).toEqual([check.id]);
    expect(storedVine()).toMatchObject({ status: 'DEPLOYED', drift: { status: 'unknown', job_id: check.id } });
    expect(storedVine().drift?.error).toContain('the agent running this job was lost');
  });

  it('checks on demand only a DEPLOYED, idle vine', async () => {
    await expectFailure(core.useCases.drift.checkNow(ada, vine.id), ConflictError, 'configuration_not_deployed');
    await deploy();
    await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    await expectFailure(core.useCases.drift.checkNow(ada, vine.id), ConflictError, 'configuration_busy');
  });

  it("a person's job cancels a queued drift check, which never runs ahead of it", async () => {
    await deploy();
    const check = await core.useCases.drift.checkNow(ada, vine.id);
    const person = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect(core.uow.snapshot().jobs.get(check.id)).toMatchObject({ status: 'CANCELLED' });
    expect(core.events.published).toContainEqual(
      expect.objectContaining({ type: 'job_status_changed', job_id: check.id, status: 'CANCELLED' }),
    );
    expect((await core.useCases.jobs.claim(worker))?.job.id).toBe(person.id);
  });

  it('a drift check can never be deployed (409 plan_speculative)', async () => {
    await deploy();
    const check = await core.useCases.drift.checkNow(ada, vine.id);
    await run(check, { status: 'SUCCESS', execution_metadata: { plan_summary: { add: 0, change: 1, destroy: 0 } } });
    await expectFailure(
      core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id, plan_job_id: check.id }),
      ConflictError,
      'plan_speculative',
    );
  });
});

describe('run triggers', () => {
  it('a successful DEPLOY upstream queues a PLAN of each downstream, down the chain', async () => {
    const middle = await seedVine(core, ada);
    const last = await seedVine(core, ada);
    await core.useCases.drift.configure(ada, middle.id, { triggers: { after: [vine.id] } });
    await core.useCases.drift.configure(ada, last.id, { triggers: { after: [middle.id] } });
    const upstream = await deploy();
    const [plan] = jobsOf(middle.id);
    expect(plan).toMatchObject({
      job_type: 'PLAN',
      status: 'QUEUED',
      trigger: { type: 'upstream', vine_id: vine.id, job_id: upstream.id },
    });
    expect(jobsOf(last.id)).toEqual([]);
    // A PLAN downstream triggers nothing; a DEPLOY of the middle vine queues the last one's plan.
    await run(plan as Job, { status: 'SUCCESS' });
    expect(jobsOf(last.id)).toEqual([]);
    const middleDeploy = await deploy(middle);
    expect(jobsOf(last.id)).toEqual([
      expect.objectContaining({ trigger: { type: 'upstream', vine_id: middle.id, job_id: middleDeploy.id } }),
    ]);
  });

  it('a failed DEPLOY triggers nothing', async () => {
    const downstream = await seedVine(core, ada);
    await core.useCases.drift.configure(ada, downstream.id, { triggers: { after: [vine.id] } });
    const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await core.useCases.jobs.reportStatus(worker, job.id, { status: 'FAILED', error_message: 'boom' });
    expect(jobsOf(downstream.id)).toEqual([]);
  });

  it('refuses a cycle (409 trigger_cycle) and a vine of another owner', async () => {
    const b = await seedVine(core, ada);
    const c = await seedVine(core, ada);
    await core.useCases.drift.configure(ada, b.id, { triggers: { after: [vine.id] } });
    await core.useCases.drift.configure(ada, c.id, { triggers: { after: [b.id] } });
    await expectFailure(
      core.useCases.drift.configure(ada, vine.id, { triggers: { after: [c.id] } }),
      ConflictError,
      'trigger_cycle',
    );
    await expectFailure(
      core.useCases.drift.configure(ada, vine.id, { triggers: { after: [vine.id] } }),
      ConflictError,
      'trigger_cycle',
    );
    expect(storedVine().triggers).toEqual({ after: [] });
    const bob = await seedUser(core);
    const bobs = await seedVine(core, bob);
    await expectFailure(
      core.useCases.drift.configure(ada, vine.id, { triggers: { after: [bobs.id] } }),
      ValidationError,
    );
  });
});

describe('drift.detected notifications', () => {
  it('are queued when a vine starts to drift, not at every check that finds it still drifted, and drift checks send no job.succeeded', async () => {
    const webhooks = new FakeWebhookSender({});
    core = createTestCore({ webhooks });
    ada = await seedUser(core);
    worker = await seedWorker(core, ada, { heartbeat: true });
    vine = await seedVine(core, ada);
    const notification = await core.useCases.notifications.create(ada, {
      name: 'drift',
      kind: 'webhook',
      url: 'https://hooks.example.com/trellis',
      events: ['drift.detected', 'job.succeeded'],
    });
    const deliveries = () =>
      outboxRows(core.uow.snapshot(), 'notification')
        .filter((delivery) => delivery.notification_id === notification.id)
        .map((delivery) => ({ event: delivery.event, job_id: (delivery.payload.job as { id: string }).id }));
    await deploy();
    expect(deliveries().map((delivery) => delivery.event)).toEqual(['job.succeeded']);

    const drifted = { status: 'SUCCESS', execution_metadata: { plan_summary: { add: 0, change: 1, destroy: 0 } } };
    const first = await core.useCases.drift.checkNow(ada, vine.id);
    await run(first, drifted);
    const second = await core.useCases.drift.checkNow(ada, vine.id);
    await run(second, drifted);
    expect(deliveries().map((delivery) => [delivery.event, delivery.job_id])).toEqual([
      ['job.succeeded', expect.any(String)],
      ['drift.detected', first.id],
    ]);

    // Back in sync, then drifting again: announced again.
    const inSync = await core.useCases.drift.checkNow(ada, vine.id);
    await run(inSync, { status: 'SUCCESS', execution_metadata: { plan_summary: { add: 0, change: 0, destroy: 0 } } });
    const again = await core.useCases.drift.checkNow(ada, vine.id);
    await run(again, drifted);
    expect(
      deliveries()
        .filter((delivery) => delivery.event === 'drift.detected')
        .map((d) => d.job_id),
    ).toEqual([first.id, again.id]);
  });
});

describe('the audit log', () => {
  it('records schedule changes, checks queued by a person, by the scheduler and by an upstream deploy', async () => {
    const downstream = await seedVine(core, ada, { name: 'downstream' });
    await deploy();
    const before = core.uow.snapshot().audit.size;
    await core.useCases.drift.configure(ada, vine.id, { drift_detection: { interval_minutes: 60 } });
    await core.useCases.drift.configure(ada, downstream.id, { triggers: { after: [vine.id] } });
    const byPerson = await core.useCases.drift.checkNow(ada, vine.id);
    await core.useCases.jobs.cancel(ada, byPerson.id);
    core.clock.advance({ minutes: 61 });
    const [byScheduler] = await core.useCases.drift.queueDue();
    await core.useCases.jobs.cancel(ada, (byScheduler as Job).id);
    const upstream = await deploy();
    // What the drift and trigger machinery recorded (the seeded deploys and cancels are the jobs use cases').
    const entries = [...core.uow.snapshot().audit.values()]
      .slice(before)
      .filter((entry) => entry.action === 'vine.update' || entry.details.trigger !== undefined);
    const summary = entries.map((entry) => [entry.action, entry.actor.type, entry.details.trigger ?? null]);
    expect(summary).toEqual([
      ['vine.update', 'user', null],
      ['vine.update', 'user', null],
      ['job.create', 'user', 'drift'],
      ['job.create', 'system', 'drift'],
      ['job.create', 'system', 'upstream'],
    ]);
    expect(entries.at(-1)?.details).toMatchObject({ vine_id: downstream.id, upstream_job_id: upstream.id });
    expect(entries[0]?.details).toEqual({ drift_interval_minutes: 60 });
    expect(entries[1]?.details).toEqual({ triggers_after: vine.id });
  });
});
