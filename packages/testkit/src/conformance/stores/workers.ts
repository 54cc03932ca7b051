import { NotFoundError, type Worker } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, later, newUser, newWorker, uuid } from './fixtures.js';
import { attemptOnOthersRecord, type OpenStoreHarness, rejectionOf, useStoreSuite } from './harness.js';

export function describeWorkerStoreConformance(open: OpenStoreHarness): void {
  describe('WorkerStore', () => {
    const suite = useStoreSuite(open);

    it('creates a worker and reads it back, for its owner and for authentication', async () => {
      const owner = await suite.asSystem((stores) => stores.users.create(newUser()));
      const worker = newWorker(owner.id, {
        mode: 'cloud',
        last_heartbeat: later(),
        version: '1.4.0-rc.1',
        metadata: { region: 'eu-west-1', tags: ['a', 'b'], nested: { n: 1, ok: false, none: null } },
      });
      expect(await suite.asOwner(owner.id, (stores) => stores.workers.create(worker))).toEqual(worker);
      expect(await suite.asOwner(owner.id, (stores) => stores.workers.get(owner.id, worker.id))).toEqual(worker);
      expect(await suite.asSystem((stores) => stores.workers.getForAuthentication(worker.id))).toEqual(worker);
      expect(await suite.asSystem((stores) => stores.workers.getForAuthentication(uuid()))).toBeNull();
      expect(await suite.asOwner(owner.id, (stores) => stores.workers.get(owner.id, uuid()))).toBeNull();
    });

    it('lists oldest first, destroyed ones included', async () => {
      const owner = await suite.asSystem((stores) => stores.users.create(newUser()));
      const workers = [
        newWorker(owner.id, { created_at: at(3) }),
        newWorker(owner.id, { created_at: at(1), destroyed_at: at(2) }),
        newWorker(owner.id, { created_at: at(3) }),
      ];
      await suite.asOwner(owner.id, async (stores) => {
        for (const worker of workers) await stores.workers.create(worker);
      });
      const listed = await suite.asOwner(owner.id, (stores) => stores.workers.list(owner.id));
      expect(listed).toEqual([workers[1], workers[0], workers[2]]);
    });

    it('records heartbeats: time and version', async () => {
      const owner = await suite.asSystem((stores) => stores.users.create(newUser()));
      const worker = await suite.asOwner(owner.id, (stores) => stores.workers.create(newWorker(owner.id)));
      const when = later();
      await suite.asOwner(owner.id, (stores) => stores.workers.recordHeartbeat(owner.id, worker.id, '2.0.0', when));
      expect(await suite.asOwner(owner.id, (stores) => stores.workers.get(owner.id, worker.id))).toEqual({
        ...worker,
        last_heartbeat: when,
        version: '2.0.0',
      });
    });

    it('replaces metadata and returns the worker; an unknown worker is NotFoundError', async () => {
      const owner = await suite.asSystem((stores) => stores.users.create(newUser()));
      const worker = await suite.asOwner(owner.id, (stores) =>
        stores.workers.create(newWorker(owner.id, { metadata: { old: true, gone: 'yes' } })),
      );
      const updated = await suite.asOwner(owner.id, (stores) =>
        stores.workers.updateMetadata(owner.id, worker.id, { deployed: { stack: 'agent', version: 3 } }),
      );
      const expected: Worker = { ...worker, metadata: { deployed: { stack: 'agent', version: 3 } } };
      expect(updated).toEqual(expected);
      expect(await suite.asOwner(owner.id, (stores) => stores.workers.get(owner.id, worker.id))).toEqual(expected);
      const error = await rejectionOf(
        suite.asOwner(owner.id, (stores) => stores.workers.updateMetadata(owner.id, uuid(), {})),
      );
      expect(error).toBeInstanceOf(NotFoundError);
    });

    it('marks a worker destroyed once, keeping the first time', async () => {
      const owner = await suite.asSystem((stores) => stores.users.create(newUser()));
      const worker = await suite.asOwner(owner.id, (stores) => stores.workers.create(newWorker(owner.id)));
      const first = later();
      await suite.asOwner(owner.id, (stores) => stores.workers.markDestroyed(owner.id, worker.id, first));
      await suite.asOwner(owner.id, (stores) => stores.workers.markDestroyed(owner.id, worker.id, later()));
      expect(await suite.asOwner(owner.id, (stores) => stores.workers.get(owner.id, worker.id))).toEqual({
        ...worker,
        destroyed_at: first,
      });
    });

    it("never shows or changes one owner's workers for another", async () => {
      const [a, b] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const worker = await suite.asOwner(a.id, (stores) =>
        stores.workers.create(newWorker(a.id, { metadata: { k: 1 } })),
      );
      expect(await suite.asOwner(b.id, (stores) => stores.workers.get(b.id, worker.id))).toBeNull();
      expect(await suite.asOwner(b.id, (stores) => stores.workers.list(b.id))).toEqual([]);
      await attemptOnOthersRecord(
        suite.asOwner(b.id, (stores) => stores.workers.recordHeartbeat(b.id, worker.id, '6.6.6', later())),
      );
      await attemptOnOthersRecord(
        suite.asOwner(b.id, (stores) => stores.workers.updateMetadata(b.id, worker.id, { hijacked: true })),
      );
      await attemptOnOthersRecord(
        suite.asOwner(b.id, (stores) => stores.workers.markDestroyed(b.id, worker.id, later())),
      );
      expect(await suite.asOwner(a.id, (stores) => stores.workers.get(a.id, worker.id))).toEqual(worker);
    });
  });
}
