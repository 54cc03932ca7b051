import { ConflictError, ForbiddenError, type VineView, type WorkerActor } from '@trellis/core';
import {
  createTestCore,
  FakeWebhookSender,
  outboxRows,
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
  core = createTestCore({
    now: '2026-05-01T00:00:00.000Z',
    webhooks: new FakeWebhookSender({ 'hooks.example.com': ['93.184.216.34'] }),
  });
  ada = await seedUser(core);
  worker = await seedWorker(core, ada, { heartbeat: true });
  vine = await seedVine(core, ada);
});

const lockInfo = (id: string) => ({ ID: id, Operation: 'OperationTypeApply', Who: 'tofu@agent' });
const state = (serial: number, lineage = 'l') => JSON.stringify({ version: 4, serial, lineage, resources: [] });

async function* body(text: string): AsyncIterable<Uint8Array> {
  yield Buffer.from(text);
}

/** The engine of a job: the worker with the job's state token, as `authenticateForState` makes it. */
const engineOf = (of: TestWorker, jobId: string): WorkerActor => ({ ...of, stateJobId: jobId });

/** A DEPLOY whose engine wrote serial 1 and holds the lock, then its agent went silent past the lost-job timeout. */
async function lostDeploy() {
  const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
  const engine = engineOf(worker, job.id);
  await core.useCases.states.lock(engine, vine.id, lockInfo('lost-lock'));
  await core.useCases.states.write(engine, vine.id, 'lost-lock', body(state(1)));
  core.clock.advance({ seconds: 121 });
  expect(await core.useCases.jobs.sweepLostJobs()).toHaveLength(1);
  return { job, engine };
}

describe('the state of a job failed as lost (issue 30)', () => {
  it("is the current state when no later job had the vine: the vine shows state_after_lost, it is announced, and an admin's acknowledgment clears it", async () => {
    await core.useCases.notifications.create(ada, {
      name: 'ops',
      kind: 'webhook',
      url: 'https://hooks.example.com/t',
      events: ['state.after_lost'],
    });
    const { job, engine } = await lostDeploy();
    // Before a write, the engine reads what the state is now.
    expect((await core.useCases.states.read(engine, vine.id))?.size).toBeGreaterThan(0);
    const version = await core.useCases.states.write(engine, vine.id, 'lost-lock', body(state(2)));
    expect(version).toMatchObject({ serial: 2, after_lost: true, rejected: false, job_id: job.id });
    // The engine's final unlock: its lock was released with the job, and the release answers success.
    expect(await core.useCases.states.unlock(engine, vine.id, lockInfo('lost-lock'))).toEqual({ released: true });

    const history = await core.useCases.tfe.history.list(ada, vine.id);
    expect(history.versions[0]?.id).toBe(version.id);
    expect(history.state_after_lost).toEqual({
      version_id: version.id,
      job_id: job.id,
      rejected: false,
      created_at: version.created_at,
    });
    const announced = outboxRows(core.uow.snapshot(), 'notification').filter((row) => row.event === 'state.after_lost');
    expect(announced.map((row) => (row.payload.job as { id: string }).id)).toEqual([job.id]);

    expect(await core.useCases.tfe.history.acknowledgeAfterLost(ada, vine.name)).toEqual({
      vine_id: vine.id,
      acknowledged: 1,
    });
    expect((await core.useCases.tfe.history.list(ada, vine.id)).state_after_lost).toBeNull();
    await expectFailure(
      core.useCases.tfe.history.acknowledgeAfterLost(ada, vine.id),
      ConflictError,
      'state_after_lost_not_set',
    );
    const audit = [...core.uow.snapshot().audit.values()].filter(
      (event) => event.action === 'state.after_lost_acknowledge',
    );
    expect(audit).toHaveLength(1);
  });

  it('is kept as rejected when a later job took the vine, whose state stays current', async () => {
    const { engine } = await lostDeploy();
    const next = await seedWorker(core, ada, { heartbeat: true });
    const later = await seedRunningJob(core, ada, next, vine, 'DEPLOY');
    const laterEngine = engineOf(next, later.id);
    await core.useCases.states.lock(laterEngine, vine.id, lockInfo('next-lock'));
    const current = await core.useCases.states.write(laterEngine, vine.id, 'next-lock', body(state(2)));

    await expectFailure(
      core.useCases.states.write(engine, vine.id, 'lost-lock', body(state(2))),
      ConflictError,
      'state_rejected',
    );
    const history = await core.useCases.tfe.history.list(ada, vine.id);
    expect(history.versions.map((version) => [version.serial, version.rejected, version.after_lost])).toEqual([
      [2, true, true],
      [2, false, false],
      [1, false, false],
    ]);
    expect(history.state_after_lost).toMatchObject({ rejected: true, job_id: engine.stateJobId });
    // The later job reads its own state, not the rejected one.
    const read = await core.useCases.states.read(laterEngine, vine.id);
    expect(read?.sha256).toBe(current.sha256);
    // Nor may the lost engine release the later job's lock.
    expect(await core.useCases.states.unlock(engine, vine.id, lockInfo('lost-lock'))).toMatchObject({
      released: false,
    });
  });

  it('is kept once when the same refused write comes again (the agent pushing its errored.tfstate)', async () => {
    const { engine } = await lostDeploy();
    const next = await seedWorker(core, ada, { heartbeat: true });
    const later = await seedRunningJob(core, ada, next, vine, 'DEPLOY');
    await core.useCases.states.write(engineOf(next, later.id), vine.id, null, body(state(2)));

    const refused = (text: string) =>
      expectFailure(core.useCases.states.write(engine, vine.id, null, body(text)), ConflictError, 'state_rejected');
    await refused(state(3));
    const versions = async () => (await core.useCases.tfe.history.list(ada, vine.id)).versions;
    const once = await versions();
    const stored = core.artifacts.keys().length;
    // The same bytes again: the same rejected version, no second copy, no bytes left behind.
    await refused(state(3));
    expect(await versions()).toEqual(once);
    expect(core.artifacts.keys()).toHaveLength(stored);
    expect(once.filter((version) => version.rejected)).toHaveLength(1);
    // Other bytes of the job are another version.
    await refused(`${state(3)}\n`);
    expect((await versions()).filter((version) => version.rejected)).toHaveLength(2);
  });

  it('is kept as rejected when a later job wrote the state since, even after that job ended', async () => {
    const { engine } = await lostDeploy();
    const next = await seedWorker(core, ada, { heartbeat: true });
    const later = await seedRunningJob(core, ada, next, vine, 'DEPLOY');
    await core.useCases.states.write(engine, vine.id, null, body(state(1))).catch(() => undefined);
    await core.useCases.states.write(engineOf(next, later.id), vine.id, null, body(state(5)));
    await core.useCases.jobs.reportStatus(next, later.id, { status: 'SUCCESS' });
    await expectFailure(
      core.useCases.states.write(engine, vine.id, null, body(state(9))),
      ConflictError,
      'state_rejected',
    );
    expect((await core.useCases.tfe.history.list(ada, vine.id)).versions[0]).toMatchObject({ rejected: true });
  });

  it('is rejected when it does not continue the current state (another lineage, a lower serial)', async () => {
    const { engine } = await lostDeploy();
    await expectFailure(
      core.useCases.states.write(engine, vine.id, null, body(state(3, 'other'))),
      ConflictError,
      'state_rejected',
    );
    await expectFailure(
      core.useCases.states.write(engine, vine.id, null, body(state(0))),
      ConflictError,
      'state_rejected',
    );
  });

  it("is not taken with the worker's own credentials, nor may the lost engine lock again", async () => {
    const { engine } = await lostDeploy();
    await expectFailure(
      core.useCases.states.write(worker, vine.id, null, body(state(2))),
      ForbiddenError,
      'state_not_for_worker',
    );
    await expectFailure(
      core.useCases.states.lock(engine, vine.id, lockInfo('again')),
      ForbiddenError,
      'state_not_for_worker',
    );
  });
});

describe('exact retries of the state lock (issue 30)', () => {
  it('answers a lock retried with the same ID as taken, and an unlock of a lock already free as released', async () => {
    const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    const engine = engineOf(worker, job.id);
    expect((await core.useCases.states.lock(engine, vine.id, lockInfo('one'))).acquired).toBe(true);
    expect((await core.useCases.states.lock(engine, vine.id, lockInfo('one'))).acquired).toBe(true);
    expect((await core.useCases.states.lock(engine, vine.id, lockInfo('two'))).acquired).toBe(false);
    expect(await core.useCases.states.unlock(engine, vine.id, lockInfo('one'))).toEqual({ released: true });
    expect(await core.useCases.states.unlock(engine, vine.id, lockInfo('one'))).toEqual({ released: true });
    await core.useCases.states.lock(engine, vine.id, lockInfo('three'));
    expect(await core.useCases.states.unlock(engine, vine.id, lockInfo('one'))).toMatchObject({ released: false });
  });
});
