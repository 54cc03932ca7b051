import { UnauthorizedError } from '@trellis/core';
import { createTestCore, seedUser, type TestCore, type TestUser } from '@trellis/testkit';
import { beforeEach, describe, expect, it } from 'vitest';

let core: TestCore;
let ada: TestUser;

beforeEach(async () => {
  core = createTestCore({ settings: { workerCredentialCacheSeconds: 5 } });
  ada = await seedUser(core);
});

/** Read-only units of work the worker lookups ran: each one is a database round trip. */
const lookups = () => core.uow.readCount;

describe('worker credential cache', () => {
  it('reuses verified credentials for the TTL, then reads the database again', async () => {
    const { worker_id, worker_token } = await core.useCases.workers.register(ada, { name: 'runner' });
    const before = lookups();
    const actor = await core.useCases.workers.authenticate(worker_id, worker_token);
    expect(actor).toEqual({ workerId: worker_id, ownerId: ada.userId });
    expect(lookups()).toBe(before + 1);
    expect(await core.useCases.workers.authenticate(worker_id.toUpperCase(), worker_token)).toEqual(actor);
    expect(core.useCases.workers.recognize(worker_id, worker_token)).toEqual(actor);
    expect(lookups()).toBe(before + 1);
    // A wrong token for a cached id is never served from the cache.
    await expect(core.useCases.workers.authenticate(worker_id, `${worker_token}x`)).rejects.toThrow(UnauthorizedError);
    expect(core.useCases.workers.recognize(worker_id, `${worker_token}x`)).toBeNull();
    core.clock.advance({ seconds: 5 });
    expect(core.useCases.workers.recognize(worker_id, worker_token)).toBeNull();
    const after = lookups();
    await core.useCases.workers.authenticate(worker_id, worker_token);
    expect(lookups()).toBe(after + 1);
  });

  it('never caches failures: each unknown id is a lookup', async () => {
    const before = lookups();
    for (let i = 0; i < 3; i++) {
      await expect(core.useCases.workers.authenticate(crypto.randomUUID(), 'guess')).rejects.toThrow(UnauthorizedError);
    }
    expect(lookups()).toBe(before + 3);
  });

  it('drops an entry when another replica announces that the credentials changed', async () => {
    const { worker_id, worker_token } = await core.useCases.workers.register(ada, { name: 'runner' });
    await core.useCases.workers.authenticate(worker_id, worker_token);
    expect(core.useCases.workers.recognize(worker_id, worker_token)).not.toBeNull();
    await core.events.publish({ type: 'worker_credentials_changed', owner_id: ada.userId, worker_id });
    expect(core.useCases.workers.recognize(worker_id, worker_token)).toBeNull();
  });

  it('announces registrations, so other replicas drop whatever they hold for the id', async () => {
    const { worker_id } = await core.useCases.workers.register(ada, { name: 'runner' });
    expect(core.events.ofType('worker_credentials_changed')).toEqual([
      { type: 'worker_credentials_changed', owner_id: ada.userId, worker_id },
    ]);
  });

  it('caches nothing with a TTL of 0', async () => {
    core = createTestCore({ settings: { workerCredentialCacheSeconds: 0 } });
    ada = await seedUser(core);
    const { worker_id, worker_token } = await core.useCases.workers.register(ada, { name: 'runner' });
    await core.useCases.workers.authenticate(worker_id, worker_token);
    expect(core.useCases.workers.recognize(worker_id, worker_token)).toBeNull();
  });
});
