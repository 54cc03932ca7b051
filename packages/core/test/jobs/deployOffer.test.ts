/**
 * Issue 31: a DEPLOY of a plan is offered to the agent that ran the plan for `DEPLOY_OFFER_MS`
 * (its workspace is warm), whoever queues it; other agents pass over it meanwhile and take it
 * after. An agent that is busy, silent or gone is not offered anything, and a job assigned to an
 * agent keeps its own rule. Time is the fake clock's.
 */
import { DEPLOY_OFFER_MS, type Job, type VineView, type WorkerActor } from '@trellis/core';
import {
  createTestCore,
  FakeWebhookSender,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { runToSuccess } from '../usecases/helpers.js';

let core: TestCore;
let ada: TestUser;
let planAgent: WorkerActor;
let other: WorkerActor;
let vine: VineView;

beforeEach(async () => {
  core = createTestCore({ webhooks: new FakeWebhookSender({}) });
  ada = await seedUser(core, { email: 'ada@example.test' });
  planAgent = await seedWorker(core, ada, { heartbeat: true, name: 'plan-agent' });
  other = await seedWorker(core, ada, { heartbeat: true });
  vine = await seedVine(core, ada);
});

/** A PLAN of the vine run to SUCCESS with changes and its artifact by `agent`. */
async function plan(agent: WorkerActor = planAgent): Promise<Job> {
  const queued = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
  return runToSuccess(core, agent, queued.id);
}

const deploy = (p: Job, input: { assigned_worker_id?: string } = {}) =>
  core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id, plan_job_id: p.id, ...input });

describe('a DEPLOY of a plan, offered to the plan’s agent', () => {
  it('goes to the plan’s agent at its next claim, even when another agent claims first', async () => {
    const job = await deploy(await plan());
    expect(await core.useCases.jobs.claim(other)).toBeNull();
    const claimed = await core.useCases.jobs.claim(planAgent);
    expect(claimed?.job.id).toBe(job.id);
  });

  it('goes to any agent once the window is over: a plan’s agent that never claims again stalls nothing', async () => {
    const job = await deploy(await plan());
    core.clock.advance({ ms: DEPLOY_OFFER_MS - 1 });
    expect(await core.useCases.jobs.claim(other)).toBeNull();
    core.clock.advance({ ms: 1 });
    expect((await core.useCases.jobs.claim(other))?.job.id).toBe(job.id);
  });

  it('lets other agents take other work meanwhile', async () => {
    const job = await deploy(await plan());
    const elsewhere = await seedVine(core, ada);
    const otherWork = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: elsewhere.id });
    expect((await core.useCases.jobs.claim(other))?.job.id).toBe(otherWork.id);
    expect((await core.useCases.jobs.claim(planAgent))?.job.id).toBe(job.id);
  });

  it('is not held for a plan’s agent that is busy with another job when the DEPLOY is queued', async () => {
    const p = await plan();
    const elsewhere = await seedVine(core, ada);
    await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: elsewhere.id });
    expect(await core.useCases.jobs.claim(planAgent)).not.toBeNull();
    const job = await deploy(p);
    expect((await core.useCases.jobs.claim(other))?.job.id).toBe(job.id);
  });

  it('is not held for a plan’s agent that went silent', async () => {
    const p = await plan();
    core.clock.advance({ seconds: core.deps.settings.heartbeatTimeoutSeconds + 1 });
    await core.useCases.workers.heartbeat(other, { version: '1.0.0' });
    const job = await deploy(p);
    expect((await core.useCases.jobs.claim(other))?.job.id).toBe(job.id);
  });

  it('keeps the rule of a DEPLOY assigned to an agent: only that one, at once', async () => {
    const job = await deploy(await plan(), { assigned_worker_id: other.workerId });
    expect(await core.useCases.jobs.claim(planAgent)).toBeNull();
    expect((await core.useCases.jobs.claim(other))?.job.id).toBe(job.id);
  });
});

describe('a DEPLOY held for its plan’s agent, as people see it', () => {
  const why = (id: string) => core.useCases.jobWaiting.show(ada, id).then((view) => view.waiting_for);
  const inQueue = (id: string) =>
    core.useCases.queue.list(ada).then((queue) => queue.jobs.find((entry) => entry.job.id === id)?.waiting_for);

  it('says it is held for that agent, and until when, on its page and in the queue; then that it waits for nothing', async () => {
    const job = await deploy(await plan());
    const until = new Date(core.clock.now().getTime() + DEPLOY_OFFER_MS).toISOString();
    for (const waiting of [await why(job.id), await inQueue(job.id)]) {
      expect(waiting).toEqual({
        reason: 'offered',
        message: expect.stringContaining(`held until ${until} for plan-agent`),
      });
    }
    core.clock.advance({ ms: DEPLOY_OFFER_MS });
    expect(await why(job.id)).toBeNull();
    expect(await inQueue(job.id)).toBeNull();
  });

  it('says nothing of an offer for a DEPLOY assigned to an agent, or one not held', async () => {
    const assigned = await deploy(await plan(), { assigned_worker_id: other.workerId });
    expect(await why(assigned.id)).toBeNull();
    await core.useCases.jobs.cancel(ada, assigned.id);
    const p = await plan();
    core.clock.advance({ seconds: core.deps.settings.heartbeatTimeoutSeconds + 1 });
    await core.useCases.workers.heartbeat(other, { version: '1.0.0' });
    const notHeld = await deploy(p);
    expect(await why(notHeld.id)).toBeNull();
  });
});
