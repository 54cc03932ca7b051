/** Which vines use which version of a module, from their last plans (issue 28, the registry page). */
import { type ModuleUse, personalNamespace } from '@trellis/core';
import {
  chunksOf,
  createTestCore,
  seedRunningJob,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  type TestWorker,
  tarGz,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';

let core: TestCore;
let ada: TestUser;
let bob: TestUser;

const MODULE = tarGz([{ path: 'main.tf', content: 'variable "cidr" {}\n' }]);

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core, { email: 'ada@example.test' });
  bob = await seedUser(core, { email: 'bob@example.test' });
});

/** Runs a job of `type` on the vine to `status`, its agent reporting `modules`. */
async function ran(
  owner: TestUser,
  worker: TestWorker,
  vine: { id: string },
  type: 'PLAN' | 'DEPLOY' | 'DESTROY',
  modules: ModuleUse[] | null,
  status: 'SUCCESS' | 'FAILED' = 'SUCCESS',
) {
  const job = await seedRunningJob(core, owner, worker, vine, type);
  if (type === 'PLAN' && status === 'SUCCESS') {
    await core.useCases.planArtifacts.upload(worker, job.id, chunksOf(new Uint8Array([1])));
  }
  await core.useCases.jobs.reportStatus(worker, job.id, {
    status,
    execution_metadata: modules ? { modules } : {},
    ...(status === 'FAILED' ? { error_message: 'boom' } : {}),
  });
  return job;
}

describe('the vines that use a module (issue 28)', () => {
  it("lists the owner's vines whose last succeeded plan or deploy installed it, with the version", async () => {
    const ns = personalNamespace(ada.userId);
    for (const version of ['1.1.0', '1.2.0', '1.3.0']) {
      await core.useCases.registryModules.publish(
        ada,
        { namespace: ns, name: 'vpc', system: 'aws', version },
        chunksOf(MODULE),
      );
    }
    const vpc = (version: string, host = 'trellis.example.com') => ({ source: `${host}/${ns}/vpc/aws`, version });
    const worker = await seedWorker(core, ada);

    const current = await seedVine(core, ada, { name: 'current' });
    await ran(ada, worker, current, 'PLAN', [vpc('1.1.0')]);
    const lastPlan = await ran(ada, worker, current, 'PLAN', [
      vpc('1.2.0'),
      { source: `trellis.example.com/${ns}/dns/aws`, version: '9.0.0' },
    ]);

    const dropped = await seedVine(core, ada, { name: 'dropped' });
    await ran(ada, worker, dropped, 'PLAN', [vpc('1.1.0')]);
    await ran(ada, worker, dropped, 'PLAN', null);

    // A failed plan or a destroy after the deploy says nothing of what the vine uses.
    const deployed = await seedVine(core, ada, { name: 'deployed' });
    const deploy = await ran(ada, worker, deployed, 'DEPLOY', [
      {
        source: `OTHER.example.com/${ns.toUpperCase()}/VPC/AWS//modules/subnets`,
        version: '1.3.0',
      },
    ]);
    await ran(ada, worker, deployed, 'PLAN', [vpc('1.1.0')], 'FAILED');
    await ran(ada, worker, deployed, 'DESTROY', null);

    // Neither a vine that never ran, nor another owner's vine naming the module, is listed.
    await seedVine(core, ada, { name: 'idle' });
    const bobs = await seedVine(core, bob, { name: 'bobs' });
    await ran(bob, await seedWorker(core, bob), bobs, 'PLAN', [vpc('1.2.0')]);

    const usage = await core.useCases.moduleUsage.usage(ada, { namespace: ns, name: 'VPC', system: 'aws' });
    expect(usage).toMatchObject({ namespace: ns, name: 'vpc', system: 'aws' });
    expect(usage.vines).toEqual([
      {
        vine_id: current.id,
        vine_name: 'current',
        version: '1.2.0',
        job_id: lastPlan.id,
        job_type: 'PLAN',
        finished_at: expect.any(String),
      },
      {
        vine_id: deployed.id,
        vine_name: 'deployed',
        version: '1.3.0',
        job_id: deploy.id,
        job_type: 'DEPLOY',
        finished_at: expect.any(String),
      },
    ]);
  });

  it('is read in the namespace: a stranger gets namespace_not_found, a missing module 404', async () => {
    const ns = personalNamespace(ada.userId);
    await core.useCases.registryModules.publish(
      ada,
      { namespace: ns, name: 'vpc', system: 'aws', version: '1.0.0' },
      chunksOf(MODULE),
    );
    await expect(
      core.useCases.moduleUsage.usage(bob, { namespace: ns, name: 'vpc', system: 'aws' }),
    ).rejects.toMatchObject({ code: 'namespace_not_found' });
    await expect(
      core.useCases.moduleUsage.usage(ada, { namespace: ns, name: 'dns', system: 'aws' }),
    ).rejects.toMatchObject({ code: 'module_not_found' });
    expect((await core.useCases.moduleUsage.usage(ada, { namespace: ns, name: 'vpc', system: 'aws' })).vines).toEqual(
      [],
    );
  });
});
