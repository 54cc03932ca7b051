import { hashToken, UnauthorizedError, WorkerCredentialCache } from '@trellis/core';
import { createTestCore, seedUser, type TestCore, type TestUser } from '@trellis/testkit/memory';
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

  it('holds at most its maximum of workers, dropping the least recently used', () => {
    const cache = new WorkerCredentialCache(core.clock, 60, core.events, 2);
    const actor = (n: number) => ({ workerId: `w${n}`, ownerId: ada.userId });
    for (const n of [1, 2]) cache.remember(actor(n), hashToken(`token-${n}`), cache.ticket());
    expect(cache.lookup('w1', 'token-1')).toEqual(actor(1));
    cache.remember(actor(3), hashToken('token-3'), cache.ticket());
    expect(cache.size).toBe(2);
    // w2 was the least recently used: w1 was looked up since.
    expect(cache.lookup('w2', 'token-2')).toBeNull();
    expect(cache.lookup('w1', 'token-1')).toEqual(actor(1));
    expect(cache.lookup('w3', 'token-3')).toEqual(actor(3));
  });

  it('does not keep a lookup that an invalidation overtook', async () => {
    const { worker_id, worker_token } = await core.useCases.workers.register(ada, { name: 'runner' });
    // The event arrives while the database read is in flight: what the read found may be stale.
    core.uow.wrapStores = (stores) => ({
      ...stores,
      workers: {
        ...stores.workers,
        getForAuthentication: async (id: string) => {
          const found = await stores.workers.getForAuthentication(id);
          await core.events.publish({ type: 'worker_credentials_changed', owner_id: ada.userId, worker_id });
          return found;
        },
      },
    });
    await core.useCases.workers.authenticate(worker_id, worker_token);
    core.uow.wrapStores = undefined;
    expect(core.useCases.workers.recognize(worker_id, worker_token)).toBeNull();
    await core.useCases.workers.authenticate(worker_id, worker_token);
    expect(core.useCases.workers.recognize(worker_id, worker_token)).not.toBeNull();
  });

  it('caches nothing with a TTL of 0', async () => {
    core = createTestCore({ settings: { workerCredentialCacheSeconds: 0 } });
    ada = await seedUser(core);
    const { worker_id, worker_token } = await core.useCases.workers.register(ada, { name: 'runner' });
    await core.useCases.workers.authenticate(worker_id, worker_token);
    expect(core.useCases.workers.recognize(worker_id, worker_token)).toBeNull();
  });
});
