import { DEFAULT_CORE_SETTINGS, isUuid } from '@trellis/core';
import {
  createTestCore,
  SequenceRandom,
  seedRunningJob,
  seedUser,
  seedVine,
  seedVineyard,
  seedWorker,
} from '@trellis/testkit/memory';
import { describe, expect, it } from 'vitest';

describe('createTestCore', () => {
  it('wires the fakes into the deps and exposes each of them', () => {
    const core = createTestCore();
    expect(core.deps).toMatchObject({
      uow: core.uow,
      clock: core.clock,
      random: core.random,
      events: core.events,
      artifacts: core.artifacts,
      signer: core.signer,
      secrets: core.secrets,
      providers: { signIn: {}, repositories: {} },
    });
    expect(core.deps.settings).toEqual(DEFAULT_CORE_SETTINGS);
    expect(Object.keys(core.useCases).sort()).toEqual(
      [
        'apiTokens',
        'audit',
        'auth',
        'configurationVersions',
        'drift',
        'gitEvents',
        'invitations',
        'notifications',
        'vines',
        'jobs',
        'jobWaiting',
        'logs',
        'orgs',
        'outbox',
        'planArtifacts',
        'policies',
        'queue',
        'planReviews',
        'vcs',
        'releases',
        'repositories',
        'signIn',
        'signInLinks',
        'states',
        'tfe',
        'vineyards',
        'vcsFeedback',
        'vineEdits',
        'workers',
        'workloadIdentity',
        // The private registry (issue 28).
        'registryModules',
        'moduleDocs',
        'moduleRepositories',
        'moduleTags',
        'moduleUsage',
        'registryProviders',
        'gpgKeys',
        'mirror',
        'jobRegistry',
      ].sort(),
    );
  });

  it('takes settings, start time and randomness', () => {
    const random = new SequenceRandom();
    const core = createTestCore({ settings: { lostJobTimeoutSeconds: 5 }, now: '2030-01-01T00:00:00Z', random });
    expect(core.settings).toEqual({ ...DEFAULT_CORE_SETTINGS, lostJobTimeoutSeconds: 5 });
    expect(core.clock.now().toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(core.random).toBe(random);
  });

  it('is deterministic for a seed', async () => {
    const ids = async (seed: string) => {
      const core = createTestCore({ seed });
      const user = await seedUser(core, { email: 'same@example.test' });
      return [user.userId, (await seedVineyard(core, user, 'v')).id];
    };
    expect(await ids('one')).toEqual(await ids('one'));
    expect(await ids('one')).not.toEqual(await ids('two'));
  });

  it('builders make valid records quickly', async () => {
    const core = createTestCore();
    const ada = await seedUser(core);
    expect(isUuid(ada.userId)).toBe(true);
    const vine = await seedVine(core, ada);
    expect(vine.source.type).toBe('inline');
    const worker = await seedWorker(core, ada, { heartbeat: true });
    expect((await core.useCases.workers.get(ada.userId, worker.workerId)).status).toBe('ONLINE');
    expect(await core.useCases.workers.authenticate(worker.workerId, worker.token)).toEqual({
      workerId: worker.workerId,
      ownerId: ada.userId,
    });
    const job = await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    expect(job).toMatchObject({ status: 'PROCESSING', job_type: 'DEPLOY', claimed_by_worker_id: worker.workerId });
  });
});
