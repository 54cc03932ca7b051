import {
  ForbiddenError,
  hashToken,
  NotFoundError,
  UnauthorizedError,
  ValidationError,
  type VineView,
} from '@trellis/core';
import {
  createTestCore,
  seedRunningJob,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure, UNKNOWN_ID } from './helpers.js';

let core: TestCore;
let ada: TestUser;

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core);
});

describe('registering a worker', () => {
  it('returns the token once and stores only its SHA-256 hash', async () => {
    const registration = await core.useCases.workers.register(ada, { name: 'runner-1' });
    expect(registration.worker_token).toMatch(/^trw_[A-Za-z0-9_-]{43}$/);
    const stored = core.uow.snapshot().workers.get(registration.worker_id)!;
    expect(stored).toMatchObject({
      owner_id: ada.userId,
      name: 'runner-1',
      mode: 'self-hosted',
      token_hash: hashToken(registration.worker_token),
      last_heartbeat: null,
      version: null,
      metadata: {},
      destroyed_at: null,
    });
    const everything = JSON.stringify([...core.uow.snapshot().workers.values()]);
    expect(everything).not.toContain(registration.worker_token);
    expect(everything).not.toContain(registration.worker_token.slice(4));
  });

  it('never shows the token hash in views', async () => {
    const { worker_id } = await core.useCases.workers.register(ada, { name: 'runner-1' });
    const view = await core.useCases.workers.get(ada.userId, worker_id);
    const list = (await core.useCases.workers.list(ada.userId)).items;
    expect(view).not.toHaveProperty('token_hash');
    expect(list[0]).not.toHaveProperty('token_hash');
    expect(JSON.stringify([view, list])).not.toContain(core.uow.snapshot().workers.get(worker_id)!.token_hash);
  });

  it('gives each worker its own token', async () => {
    const a = await core.useCases.workers.register(ada, { name: 'a' });
    const b = await core.useCases.workers.register(ada, { name: 'b' });
    expect(a.worker_token).not.toBe(b.worker_token);
    expect(a.worker_id).not.toBe(b.worker_id);
  });

  it('takes mode cloud and refuses other modes and bad names', async () => {
    const { worker_id } = await core.useCases.workers.register(ada, { name: 'c', mode: 'cloud' });
    expect(core.uow.snapshot().workers.get(worker_id)?.mode).toBe('cloud');
    await expectFailure(core.useCases.workers.register(ada, { name: 'd', mode: 'docker' }), ValidationError);
    await expectFailure(core.useCases.workers.register(ada, { name: 'has space' }), ValidationError);
    await expectFailure(core.useCases.workers.register(ada, { name: undefined }), ValidationError);
    expect(core.uow.snapshot().workers.size).toBe(1);
  });
});

describe('authenticating a worker', () => {
  it('accepts the id and token it was given', async () => {
    const worker = await seedWorker(core, ada);
    expect(await core.useCases.workers.authenticate(worker.workerId, worker.token)).toEqual({
      workerId: worker.workerId,
      ownerId: ada.userId,
    });
    expect((await core.useCases.workers.authenticate(worker.workerId.toUpperCase(), worker.token)).workerId).toBe(
      worker.workerId,
    );
  });

  it('refuses, always with the same 401, a wrong token, an unknown or malformed id, or nothing', async () => {
    const worker = await seedWorker(core, ada);
    const other = await seedWorker(core, ada);
    const attempts: [unknown, unknown][] = [
      [worker.workerId, other.token],
      [worker.workerId, `${worker.token}x`],
      [worker.workerId, worker.token.slice(0, -1)],
      [worker.workerId, ''],
      [worker.workerId, undefined],
      [worker.workerId, hashToken(worker.token)],
      [UNKNOWN_ID, worker.token],
      ['not-a-uuid', worker.token],
      [undefined, worker.token],
    ];
    for (const [id, token] of attempts) {
      const error = await expectFailure(
        core.useCases.workers.authenticate(id, token),
        UnauthorizedError,
        'invalid_worker_credentials',
      );
      expect(error.message).toBe('worker id or token is not valid');
    }
  });

  it('refuses a destroyed worker', async () => {
    const worker = await seedWorker(core, ada);
    await core.uow.modify((state) => {
      state.workers.get(worker.workerId)!.destroyed_at = core.clock.now().toISOString();
    });
    // Destroyed behind the application's back, no event drops the cached credentials: they expire.
    core.clock.advance({ seconds: core.settings.workerCredentialCacheSeconds });
    await expectFailure(core.useCases.workers.authenticate(worker.workerId, worker.token), UnauthorizedError);
  });
});

describe('heartbeats and worker status', () => {
  let vine: VineView;
  beforeEach(async () => {
    vine = await seedVine(core, ada);
  });

  it('records version and time, and answers the heartbeat interval and the lost-job timeout', async () => {
    const worker = await seedWorker(core, ada);
    core.clock.advance({ seconds: 3 });
    expect(await core.useCases.workers.heartbeat(worker, { version: '1.4.0' })).toEqual({
      cancel_job_ids: [],
      heartbeat_interval_s: 30,
      lost_job_timeout_s: 120,
    });
    expect(await core.useCases.workers.get(ada.userId, worker.workerId)).toMatchObject({
      version: '1.4.0',
      last_heartbeat: core.clock.now().toISOString(),
    });
  });

  it.each([undefined, '', '   ', 7, 'v'.repeat(101)])('refuses the version %j', async (version) => {
    const worker = await seedWorker(core, ada);
    await expectFailure(core.useCases.workers.heartbeat(worker, { version }), ValidationError);
  });

  it('is OFFLINE before its first heartbeat, ONLINE after, OFFLINE after 60 s of silence', async () => {
    const worker = await seedWorker(core, ada);
    const status = async () => (await core.useCases.workers.get(ada.userId, worker.workerId)).status;
    expect(await status()).toBe('OFFLINE');
    await core.useCases.workers.heartbeat(worker, { version: '1.0.0' });
    expect(await status()).toBe('ONLINE');
    core.clock.advance({ seconds: 60 });
    expect(await status()).toBe('ONLINE');
    core.clock.advance(1);
    expect(await status()).toBe('OFFLINE');
    await core.useCases.workers.heartbeat(worker, { version: '1.0.0' });
    expect(await status()).toBe('ONLINE');
  });

  it('is BUSY while it runs a job, ONLINE again when the job ends', async () => {
    const worker = await seedWorker(core, ada, { heartbeat: true });
    const idle = await seedWorker(core, ada, { heartbeat: true });
    const job = await seedRunningJob(core, ada, worker, vine);
    const statuses = async () =>
      Object.fromEntries((await core.useCases.workers.list(ada.userId)).items.map((w) => [w.id, w.status]));
    expect(await statuses()).toEqual({ [worker.workerId]: 'BUSY', [idle.workerId]: 'ONLINE' });
    await core.useCases.jobs.reportStatus(worker, job.id, { status: 'SUCCESS' });
    expect(await statuses()).toEqual({ [worker.workerId]: 'ONLINE', [idle.workerId]: 'ONLINE' });
  });

  it('follows the configured heartbeat timeout', async () => {
    core = createTestCore({ settings: { heartbeatTimeoutSeconds: 10 } });
    ada = await seedUser(core);
    const worker = await seedWorker(core, ada, { heartbeat: true });
    core.clock.advance({ seconds: 11 });
    expect((await core.useCases.workers.get(ada.userId, worker.workerId)).status).toBe('OFFLINE');
  });

  it('lists the owner’s workers newest first, destroyed ones included', async () => {
    const first = await seedWorker(core, ada, { name: 'zz' });
    core.clock.advance(1000);
    const second = await seedWorker(core, ada, { name: 'aa' });
    await core.uow.modify((state) => {
      state.workers.get(first.workerId)!.destroyed_at = core.clock.now().toISOString();
    });
    const list = (await core.useCases.workers.list(ada.userId)).items;
    expect(list.map((w) => [w.id, w.status])).toEqual([
      [second.workerId, 'OFFLINE'],
      [first.workerId, 'DESTROYED'],
    ]);
    const bob = await seedUser(core);
    expect((await core.useCases.workers.list(bob.userId)).items).toEqual([]);
    await expectFailure(core.useCases.workers.get(bob.userId, first.workerId), NotFoundError, 'worker_not_found');
    await expectFailure(core.useCases.workers.get(ada.userId, 'x'), ValidationError);
  });
});

describe('worker metadata', () => {
  it('is updated by the worker itself and returned with the worker', async () => {
    const worker = await seedWorker(core, ada);
    const view = await core.useCases.workers.updateMetadata(worker, worker.workerId, {
      deploy: { stack: 'trellis-agent', region: 'eu-west-1' },
    });
    expect(view.metadata).toEqual({ deploy: { stack: 'trellis-agent', region: 'eu-west-1' } });
    expect(view).not.toHaveProperty('token_hash');
    expect((await core.useCases.workers.get(ada.userId, worker.workerId)).metadata).toEqual(view.metadata);
  });

  it('403s any other worker, even of the same owner', async () => {
    const worker = await seedWorker(core, ada);
    const other = await seedWorker(core, ada);
    await expectFailure(
      core.useCases.workers.updateMetadata(other, worker.workerId, { a: 1 }),
      ForbiddenError,
      'not_this_worker',
    );
    expect(core.uow.snapshot().workers.get(worker.workerId)?.metadata).toEqual({});
  });

  it('refuses metadata that is not an object or too big', async () => {
    const worker = await seedWorker(core, ada);
    await expectFailure(core.useCases.workers.updateMetadata(worker, worker.workerId, [1]), ValidationError);
    await expectFailure(core.useCases.workers.updateMetadata(worker, worker.workerId, 'x'), ValidationError);
    await expectFailure(
      core.useCases.workers.updateMetadata(worker, worker.workerId, { blob: 'x'.repeat(64 * 1024) }),
      ValidationError,
    );
  });

  it('refuses a deploy source that breaks the git source rule, naming the field', async () => {
    const worker = await seedWorker(core, ada);
    const hostile = {
      deploy: { source: { type: 'git', url: 'https://git.example.test/a.git', ref: '--upload-pack=x' } },
    };
    const error = await core.useCases.workers.updateMetadata(worker, worker.workerId, hostile).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).fields.map((field) => field.path)).toEqual(['metadata.deploy.source.ref']);
    await expect(
      core.useCases.workers.registerTendril({
        name: 'tendril-bad',
        owner_id: ada.userId,
        metadata: { deploy: { source: { type: 'git', url: 'https://t0ken@git.example.test/a.git' } } },
      }),
    ).rejects.toThrow(ValidationError);
    expect(core.uow.snapshot().workers.get(worker.workerId)?.metadata).toEqual({});
  });
});

describe('tendrils (cloud agents registered by CI)', () => {
  it('registers a cloud worker for the owner with its metadata', async () => {
    const registration = await core.useCases.workers.registerTendril({
      name: 'tendril-eu',
      owner_id: ada.userId,
      metadata: { region: 'eu-west-1' },
    });
    const actor = await core.useCases.workers.authenticate(registration.worker_id, registration.worker_token);
    expect(actor.ownerId).toBe(ada.userId);
    expect(await core.useCases.workers.get(ada.userId, registration.worker_id)).toMatchObject({
      mode: 'cloud',
      name: 'tendril-eu',
      metadata: { region: 'eu-west-1' },
    });
  });

  it('404s an unknown owner and 400s malformed input', async () => {
    await expectFailure(
      core.useCases.workers.registerTendril({ name: 't', owner_id: UNKNOWN_ID }),
      NotFoundError,
      'user_not_found',
    );
    await expectFailure(core.useCases.workers.registerTendril({ name: 't', owner_id: 'x' }), ValidationError);
    await expectFailure(core.useCases.workers.registerTendril({ name: '', owner_id: ada.userId }), ValidationError);
    await expectFailure(
      core.useCases.workers.registerTendril({ name: 't', owner_id: ada.userId, metadata: [] }),
      ValidationError,
    );
    expect(core.uow.snapshot().workers.size).toBe(0);
  });
});
