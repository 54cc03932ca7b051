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

    it('records heartbeats of several owners in one system write, never moving one back', async () => {
      const [a, b] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const ofA = await suite.asOwner(a.id, (stores) => stores.workers.create(newWorker(a.id)));
      const ofB = await suite.asOwner(b.id, (stores) => stores.workers.create(newWorker(b.id)));
      const fresh = await suite.asOwner(b.id, (stores) => stores.workers.create(newWorker(b.id)));
      await suite.asOwner(b.id, (stores) => stores.workers.recordHeartbeat(b.id, ofB.id, '3.0.0', at(50)));
      await suite.asSystem((stores) =>
        stores.workers.recordHeartbeats([
          { worker_id: ofA.id, version: '2.0.0', at: at(40) },
          // Another replica wrote a later heartbeat of this worker meanwhile: it stays.
          { worker_id: ofB.id, version: '2.0.0', at: at(40) },
          { worker_id: fresh.id, version: '2.1.0', at: at(41) },
          { worker_id: uuid(), version: '9.9.9', at: at(42) },
        ]),
      );
      const read = (owner: string, id: string) => suite.asOwner(owner, (stores) => stores.workers.get(owner, id));
      expect(await read(a.id, ofA.id)).toMatchObject({ last_heartbeat: at(40), version: '2.0.0' });
      expect(await read(b.id, ofB.id)).toMatchObject({ last_heartbeat: at(50), version: '3.0.0' });
      expect(await read(b.id, fresh.id)).toMatchObject({ last_heartbeat: at(41), version: '2.1.0' });
      await suite.asSystem((stores) => stores.workers.recordHeartbeats([]));
      await suite.asSystem((stores) =>
        stores.workers.recordHeartbeats([{ worker_id: ofB.id, version: '3.1.0', at: at(60) }]),
      );
      expect(await read(b.id, ofB.id)).toMatchObject({ last_heartbeat: at(60), version: '3.1.0' });
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
