import { UnavailableError } from '@trellis/core';
import {
  bodyOf,
  createTestCore,
  seedRunningJob,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from './helpers.js';

let core: TestCore;
beforeEach(() => {
  core = createTestCore();
});

describe('outages', () => {
  it('a database outage surfaces from use cases as UnavailableError, and they work again after', async () => {
    const ada = await seedUser(core);
    core.uow.setUnavailable();
    await expectFailure(core.useCases.vineyards.list(ada), UnavailableError, 'database_unavailable');
    await expectFailure(core.useCases.vineyards.create(ada, { name: 'prod' }), UnavailableError);
    await expectFailure(core.deps.uow.check(), UnavailableError);
    core.uow.setUnavailable(false);
    await expect(core.useCases.vineyards.create(ada, { name: 'prod' })).resolves.toBeTruthy();
  });

  it('an artifact store outage surfaces from a plan download as UnavailableError', async () => {
    const ada = await seedUser(core);
    const worker = await seedWorker(core, ada, { heartbeat: true });
    const plan = await seedRunningJob(core, ada, worker, await seedVine(core, ada));
    await core.useCases.planArtifacts.upload(worker, plan.id, bodyOf('plan'));
    core.artifacts.unavailable = true;
    await expectFailure(core.useCases.planArtifacts.download(worker, plan.id), UnavailableError);
    await expectFailure(core.deps.artifacts.check(), UnavailableError);
  });
});
