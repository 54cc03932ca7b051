import { ForbiddenError, type VineView } from '@trellis/core';
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

const lockInfo = (id: string) => ({ ID: id, Operation: 'OperationTypeApply', Who: 'tofu@agent' });

async function* body(text: string): AsyncIterable<Uint8Array> {
  yield Buffer.from(text);
}

describe('the state backend when a job ends', () => {
  it('lets the engine of a just-cancelled job write its last state and release its lock', async () => {
    const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await core.useCases.states.lock(worker, vine.id, lockInfo('lock-1'));
    await core.useCases.jobs.cancel(ada, job.id);
    core.clock.advance({ seconds: 30 });
    await core.useCases.states.write(worker, vine.id, 'lock-1', body('{"serial":2,"lineage":"l"}'));
    expect(await core.useCases.states.unlock(worker, vine.id, lockInfo('lock-1'))).toEqual({ released: true });
  });

  it('refuses the engine of a job cancelled longer ago than the cancel notice window', async () => {
    const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await core.useCases.jobs.cancel(ada, job.id);
    core.clock.advance({ seconds: 601 });
    await expectFailure(core.useCases.states.read(worker, vine.id), ForbiddenError, 'state_not_for_worker');
  });

  it('refuses the engine of a job that failed', async () => {
    const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await core.useCases.jobs.reportStatus(worker, job.id, { status: 'FAILED', error_message: 'boom' });
    await expectFailure(core.useCases.states.read(worker, vine.id), ForbiddenError, 'state_not_for_worker');
  });

  it('releases the state lock of a job the lost-agent sweep fails, so the next job can take it', async () => {
    await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await core.useCases.states.lock(worker, vine.id, lockInfo('lost-lock'));
    core.clock.advance({ seconds: 121 });
    expect(await core.useCases.jobs.sweepLostJobs()).toHaveLength(1);

    const next = await seedWorker(core, ada, { heartbeat: true });
    await seedRunningJob(core, ada, next, vine, 'DEPLOY');
    const outcome = await core.useCases.states.lock(next, vine.id, lockInfo('next-lock'));
    expect(outcome.acquired).toBe(true);
  });
});
