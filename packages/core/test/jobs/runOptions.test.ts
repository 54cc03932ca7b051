/**
 * Run options of a PLAN (issue 27): checked where they come in, carried by the DEPLOY of that plan
 * (same hash: the stale-plan guard holds), and only for an agent that says it can run them.
 */
import {
  chunksOf,
  createTestCore,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';

let core: TestCore;
let ada: TestUser;

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core);
});

describe('run options', () => {
  it.each([
    ['a newline', { target: ['a\nb'] }, 'run_options.target.0'],
    ['an empty address', { target: [''] }, 'run_options.target.0'],
    ['101 addresses', { replace: Array.from({ length: 101 }, (_, i) => `null_resource.r${i}`) }, 'run_options.replace'],
    ['refresh-only without refresh', { refresh_only: true, refresh: false }, 'run_options.refresh'],
    ['an unknown option', { parallelism: 3 }, 'run_options.parallelism'],
    ['a refresh that is no boolean', { refresh: 'no' }, 'run_options.refresh'],
  ])('refuses %s', async (_name, options, path) => {
    const vine = await seedVine(core, ada);
    await expect(
      core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id, run_options: options }),
    ).rejects.toMatchObject({ code: 'validation_failed', fields: [expect.objectContaining({ path })] });
  });

  it('are for PLAN jobs only, and not with a refresh-only destroy plan', async () => {
    const vine = await seedVine(core, ada);
    await expect(
      core.useCases.jobs.create(ada, {
        job_type: 'DEPLOY',
        configuration_id: vine.id,
        run_options: { target: ['a.b'] },
      }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(
      core.useCases.jobs.create(ada, {
        job_type: 'PLAN',
        configuration_id: vine.id,
        destroy: true,
        run_options: { refresh_only: true },
      }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
  });

  it('go to the snapshot (empty lists dropped); the DEPLOY of the plan carries them with the same hash', async () => {
    const vine = await seedVine(core, ada);
    const worker = await seedWorker(core, ada);
    const plan = await core.useCases.jobs.create(ada, {
      job_type: 'PLAN',
      configuration_id: vine.id,
      run_options: { target: [' null_resource.a '], replace: [], refresh: false },
    });
    expect(plan.config_snapshot.run_options).toEqual({ target: ['null_resource.a'], refresh: false });
    const plain = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect(plain.config_hash).not.toBe(plan.config_hash);

    const claimed = await core.useCases.jobs.claim(worker, ['run_options']);
    expect(claimed?.job.config_snapshot.run_options).toEqual({ target: ['null_resource.a'], refresh: false });
    await core.useCases.planArtifacts.upload(worker, plan.id, chunksOf(new Uint8Array([1])));
    await core.useCases.jobs.reportStatus(worker, plan.id, { status: 'SUCCESS' });
    const deploy = await core.useCases.jobs.create(ada, {
      job_type: 'DEPLOY',
      configuration_id: vine.id,
      plan_job_id: plan.id,
    });
    expect(deploy.config_hash).toBe(plan.config_hash);
    expect(deploy.config_snapshot.run_options).toEqual(plan.config_snapshot.run_options);
  });

  it('end the job at the claim of an agent that does not say it runs them (agent_outdated)', async () => {
    const vine = await seedVine(core, ada);
    const worker = await seedWorker(core, ada);
    const plan = await core.useCases.jobs.create(ada, {
      job_type: 'PLAN',
      configuration_id: vine.id,
      run_options: { refresh_only: true },
    });
    expect(await core.useCases.jobs.claim(worker)).toBeNull();
    const ended = await core.useCases.jobs.get(ada, plan.id);
    expect(ended.status).toBe('FAILED');
    expect(ended.error_message).toMatch(/^agent_outdated: this job needs run options/);
    // A plain plan is still the old agent's.
    const plain = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect((await core.useCases.jobs.claim(worker))?.job.id).toBe(plain.id);
  });
});
