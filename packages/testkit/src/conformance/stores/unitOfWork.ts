import { ConflictError, ownerScope, type Stores, systemScope, ValidationError } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { later, newJob, newRelease, newUser, newVine, newVineyard, newWorker } from './fixtures.js';
import { type OpenStoreHarness, rejectionOf, useStoreSuite } from './harness.js';

export function describeUnitOfWorkConformance(open: OpenStoreHarness): void {
  describe('UnitOfWork', () => {
    const suite = useStoreSuite(open);

    it('commits what the work wrote and returns what it returned', async () => {
      const user = newUser();
      const result = await suite.asSystem(async (stores) => {
        await stores.users.create(user);
        return { answer: 42 };
      });
      expect(result).toEqual({ answer: 42 });
      expect(await suite.asSystem((stores) => stores.users.get(user.id))).toEqual(user);
    });

    it('reads in a read-only unit of work, in either scope', async () => {
      const owner = await suite.seedOwner();
      expect(await suite.uow.read(systemScope, (stores) => stores.users.get(owner.id))).toEqual(owner.user);
      expect(
        await suite.uow.read(ownerScope(owner.id), (stores) => stores.workers.get(owner.id, owner.worker.id)),
      ).toEqual(owner.worker);
    });

    it('refuses a write in a read-only unit of work and commits nothing', async () => {
      const user = newUser();
      await expect(suite.uow.read(systemScope, (stores) => stores.users.create(user))).rejects.toThrow();
      expect(await suite.asSystem((stores) => stores.users.get(user.id))).toBeNull();
      // The next unit of work may write as usual.
      await suite.asSystem((stores) => stores.users.create(user));
      expect(await suite.asSystem((stores) => stores.users.get(user.id))).toEqual(user);
    });

    it('writes nothing when the work throws, and rethrows its error unchanged', async () => {
      const owner = await suite.seedOwner();
      const failure = new Error('the work failed half-way');
      const ids = { vineyard: '', vine: '', worker: '', job: '' };
      const error = await rejectionOf(
        suite.asOwner(owner.id, async (stores) => {
          const vineyard = await stores.vineyards.create(newVineyard(owner.id));
          const vine = await stores.vines.create(newVine(owner.id, vineyard.id));
          const worker = await stores.workers.create(newWorker(owner.id));
          const job = await stores.jobs.create(newJob(owner.id, vine));
          await stores.logs.append(owner.id, job.id, 'written, then undone', 'STDOUT', later());
          await stores.vines.updateStatus(owner.id, owner.vine.id, 'FAILED', 'undone', later());
          await stores.workers.recordHeartbeat(owner.id, owner.worker.id, '9.9.9', later());
          Object.assign(ids, { vineyard: vineyard.id, vine: vine.id, worker: worker.id, job: job.id });
          throw failure;
        }),
      );
      expect(error).toBe(failure);
      const after = await suite.asOwner(owner.id, async (stores) => ({
        vineyard: await stores.vineyards.get(owner.id, ids.vineyard),
        vine: await stores.vines.get(owner.id, ids.vine),
        worker: await stores.workers.get(owner.id, ids.worker),
        job: await stores.jobs.get(owner.id, ids.job),
        logs: await stores.logs.list(owner.id, ids.job, 0, 10),
        seededVine: await stores.vines.get(owner.id, owner.vine.id),
        seededWorker: await stores.workers.get(owner.id, owner.worker.id),
      }));
      expect(after).toEqual({
        vineyard: null,
        vine: null,
        worker: null,
        job: null,
        logs: [],
        seededVine: owner.vine,
        seededWorker: owner.worker,
      });
    });

    it('passes domain errors thrown by the work through unchanged, and rolls back', async () => {
      const failure = new ValidationError('bad input', [{ path: 'x', message: 'bad' }]);
      const user = newUser();
      const error = await rejectionOf(
        suite.asSystem(async (stores) => {
          await stores.users.create(user);
          throw failure;
        }),
      );
      expect(error).toBe(failure);
      expect(await suite.asSystem((stores) => stores.users.get(user.id))).toBeNull();
    });

    it('stays usable after the work caught a ConflictError, and commits the rest', async () => {
      const existing = await suite.asSystem((stores) => stores.releases.create(newRelease('1.0.0')));
      const taken = await suite.asSystem((stores) => stores.users.create(newUser()));
      const fresh = newUser();
      const outcome = await suite.asSystem(async (stores) => {
        const conflicts: string[] = [];
        for (const attempt of [
          () => stores.releases.create(newRelease('1.0.0')),
          () => stores.users.create(newUser({ email: taken.email })),
        ]) {
          try {
            await attempt();
          } catch (error) {
            if (!(error instanceof ConflictError)) throw error;
            conflicts.push(error.code);
          }
        }
        await stores.users.create(fresh);
        return conflicts;
      });
      expect(outcome).toEqual(['release_exists', 'email_taken']);
      expect(await suite.asSystem((stores) => stores.users.get(fresh.id))).toEqual(fresh);
      expect(await suite.asSystem((stores) => stores.releases.list())).toEqual([existing]);
    });

    it('refuses a store that escaped its unit of work', async () => {
      let escaped: Stores | undefined;
      await suite.asSystem(async (stores) => {
        escaped = stores;
      });
      const user = newUser();
      await expect((escaped as Stores).users.create(user)).rejects.toThrow();
      expect(await suite.asSystem((stores) => stores.users.get(user.id))).toBeNull();
    });

    it('refuses a unit of work started inside another (it would wait on the outer one forever)', async () => {
      const user = newUser();
      const error = await rejectionOf(
        suite.asSystem(async (stores) => {
          await stores.users.create(user);
          await suite.asSystem((inner) => inner.users.get(user.id));
        }),
      );
      expect(error).toBeInstanceOf(Error);
      expect(await suite.asSystem((stores) => stores.users.get(user.id))).toBeNull();
    });

    it('lets work left running by an ended unit of work start a new one', async () => {
      const user = newUser();
      let later: Promise<unknown> | undefined;
      await suite.asSystem(async () => {
        later = new Promise((resolve) => setTimeout(resolve, 10)).then(() =>
          suite.asSystem((stores) => stores.users.create(user)),
        );
      });
      await later;
      expect(await suite.asSystem((stores) => stores.users.get(user.id))).toEqual(user);
    });

    it('commits concurrent units of work independently', async () => {
      const owner = await suite.seedOwner();
      const vineyards = Array.from({ length: 20 }, () => newVineyard(owner.id));
      await Promise.all(
        vineyards.map((vineyard) => suite.asOwner(owner.id, (stores) => stores.vineyards.create(vineyard))),
      );
      const listed = await suite.asOwner(owner.id, (stores) => stores.vineyards.list(owner.id));
      expect(listed.map((vineyard) => vineyard.id).sort()).toEqual(
        [owner.vineyard.id, ...vineyards.map((vineyard) => vineyard.id)].sort(),
      );
    });

    it('answers check() when the database is up', async () => {
      await expect(suite.uow.check()).resolves.toBeUndefined();
    });
  });
}
