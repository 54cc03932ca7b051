import { type NewStateVersion, NotFoundError, type StateLock, type StateVersion } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { later, newJob, uuid } from './fixtures.js';
import { type OpenStoreHarness, rejectionOf, useStoreSuite } from './harness.js';

function newVersion(ownerId: string, vineId: string, overrides: Partial<NewStateVersion> = {}): NewStateVersion {
  return {
    owner_id: ownerId,
    vine_id: vineId,
    serial: 1,
    lineage: uuid(),
    size: 64 * 1024 * 1024,
    sha256: 'd'.repeat(64),
    storage_key: `state/${ownerId}/${vineId}/${uuid()}.tfstate`,
    job_id: null,
    created_by: null,
    upload_id: null,
    created_at: later(),
    ...overrides,
  };
}

/** What a version is unless its writer said otherwise. */
const NOT_LATE = { after_lost: false, rejected: false, reviewed_at: null, reviewed_by: null };

function newLock(ownerId: string, vineId: string, overrides: Partial<StateLock> = {}): StateLock {
  const id = uuid();
  return {
    owner_id: ownerId,
    vine_id: vineId,
    lock_id: id,
    info: { ID: id, Operation: 'OperationTypeApply', Who: 'agent@host', Version: '1.9.0', Path: '', Info: '' },
    created_at: later(),
    ...overrides,
  };
}

export function describeStateStoreConformance(open: OpenStoreHarness): void {
  describe('StateStore versions', () => {
    const suite = useStoreSuite(open);

    it('reads a version by id and by upload id, and deleting a vine takes its versions and lock (issue 26)', async () => {
      const owner = await suite.seedOwner();
      const other = await suite.seedOwner();
      const uploadId = uuid();
      const person = owner.id;
      const stored = await suite.asOwner(owner.id, (stores) =>
        stores.states.addVersion(newVersion(owner.id, owner.vine.id, { created_by: person, upload_id: uploadId })),
      );
      expect(stored).toMatchObject({ created_by: person, upload_id: uploadId });
      const read = await suite.asOwner(owner.id, async (stores) => [
        await stores.states.getVersion(owner.id, stored.id),
        await stores.states.findUpload(owner.id, uploadId),
        await stores.states.findUpload(owner.id, uuid()),
      ]);
      expect(read).toEqual([stored, stored, null]);
      // Another owner sees nothing of it.
      expect(await suite.asOwner(other.id, (stores) => stores.states.getVersion(other.id, stored.id))).toBeNull();
      await suite.asOwner(owner.id, (stores) => stores.states.acquireLock(newLock(owner.id, owner.vine.id)));
      const keys = await suite.asOwner(owner.id, (stores) => stores.vines.delete(owner.id, owner.vine.id));
      expect(keys).toEqual([stored.storage_key]);
      const after = await suite.asOwner(owner.id, async (stores) => [
        await stores.vines.get(owner.id, owner.vine.id),
        await stores.states.getVersion(owner.id, stored.id),
        await stores.states.getLock(owner.id, owner.vine.id),
      ]);
      expect(after).toEqual([null, null, null]);
    });

    it('has no version before the first write', async () => {
      const owner = await suite.seedOwner();
      const read = await suite.asOwner(owner.id, async (stores) => [
        await stores.states.latest(owner.id, owner.vine.id),
        await stores.states.listVersions(owner.id, owner.vine.id),
      ]);
      expect(read).toEqual([null, []]);
    });

    it('records versions with increasing integer ids; latest is the newest, the list newest first', async () => {
      const owner = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      const lineage = uuid();
      const versions: StateVersion[] = [];
      for (const [serial, jobId] of [
        [1, null],
        [2, job.id],
        [7, job.id],
      ] as const) {
        const version = newVersion(owner.id, owner.vine.id, { serial, lineage, job_id: jobId });
        const stored = await suite.asOwner(owner.id, (stores) => stores.states.addVersion(version));
        expect(stored).toEqual({ ...version, ...NOT_LATE, id: stored.id });
        expect(Number.isSafeInteger(stored.id)).toBe(true);
        versions.push(stored);
      }
      const ids = versions.map((version) => version.id);
      expect([...ids].sort((x, y) => x - y)).toEqual(ids);
      expect(new Set(ids).size).toBe(3);
      expect(await suite.asOwner(owner.id, (stores) => stores.states.latest(owner.id, owner.vine.id))).toEqual(
        versions[2],
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.states.listVersions(owner.id, owner.vine.id))).toEqual(
        [...versions].reverse(),
      );
    });

    it("keeps each vine's versions apart", async () => {
      const owner = await suite.seedOwner();
      const other = await suite.seedOwner();
      await suite.asOwner(other.id, (stores) => stores.states.addVersion(newVersion(other.id, other.vine.id)));
      expect(await suite.asOwner(owner.id, (stores) => stores.states.latest(owner.id, owner.vine.id))).toBeNull();
    });

    it("never shows one owner's versions to another, nor lets another add to its vine", async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const version = await suite.asOwner(a.id, (stores) => stores.states.addVersion(newVersion(a.id, a.vine.id)));
      const seen = await suite.asOwner(b.id, async (stores) => [
        await stores.states.latest(b.id, a.vine.id),
        await stores.states.listVersions(b.id, a.vine.id),
      ]);
      expect(seen).toEqual([null, []]);
      const error = await rejectionOf(
        suite.asOwner(b.id, (stores) => stores.states.addVersion(newVersion(b.id, a.vine.id, { serial: 99 }))),
      );
      expect(error).toBeInstanceOf(NotFoundError);
      expect(await suite.asOwner(a.id, (stores) => stores.states.listVersions(a.id, a.vine.id))).toEqual([version]);
    });
  });

  describe('StateStore versions after a lost job (issue 30)', () => {
    const suite = useStoreSuite(open);

    it('keeps a rejected version out of latest but in the list, and an unreviewed late one from pruning until reviewed', async () => {
      const owner = await suite.seedOwner();
      const lineage = uuid();
      const add = (overrides: Partial<NewStateVersion>) =>
        suite.asOwner(owner.id, (stores) =>
          stores.states.addVersion(newVersion(owner.id, owner.vine.id, { lineage, ...overrides })),
        );
      const late = await add({ serial: 2, after_lost: true });
      const current = await add({ serial: 3 });
      const rejected = await add({ serial: 3, after_lost: true, rejected: true });
      expect(rejected).toMatchObject({ after_lost: true, rejected: true, reviewed_at: null, reviewed_by: null });
      expect(await suite.asOwner(owner.id, (stores) => stores.states.latest(owner.id, owner.vine.id))).toEqual(current);
      expect(
        (await suite.asOwner(owner.id, (stores) => stores.states.listVersions(owner.id, owner.vine.id))).map(
          (version) => version.id,
        ),
      ).toEqual([rejected.id, current.id, late.id]);
      // Unreviewed late versions are never pruned: only `current` could go.
      expect(
        await suite.asOwner(owner.id, (stores) => stores.states.pruneVersions(owner.id, owner.vine.id, 0)),
      ).toEqual([current.storage_key]);
      const at = later();
      expect(
        await suite.asOwner(owner.id, (stores) => stores.states.reviewAfterLost(owner.id, owner.vine.id, owner.id, at)),
      ).toBe(2);
      const reviewed = await suite.asOwner(owner.id, (stores) => stores.states.getVersion(owner.id, late.id));
      expect(reviewed).toMatchObject({ reviewed_by: owner.id });
      expect(Date.parse(reviewed?.reviewed_at ?? '')).toBe(Date.parse(at));
      expect(
        await suite.asOwner(owner.id, (stores) => stores.states.reviewAfterLost(owner.id, owner.vine.id, owner.id, at)),
      ).toBe(0);
      const pruned = await suite.asOwner(owner.id, (stores) => stores.states.pruneVersions(owner.id, owner.vine.id, 1));
      expect(pruned).toEqual([late.storage_key]);
    });
  });

  describe('StateStore pruning', () => {
    const suite = useStoreSuite(open);

    it("deletes all but the newest versions of the vine, returning their keys, and leaves other vines' alone", async () => {
      const owner = await suite.seedOwner();
      const other = await suite.seedOwner();
      const versions: StateVersion[] = [];
      for (const serial of [1, 2, 3, 4, 5]) {
        const version = newVersion(owner.id, owner.vine.id, { serial });
        versions.push(await suite.asOwner(owner.id, (stores) => stores.states.addVersion(version)));
      }
      const foreign = await suite.asOwner(other.id, (stores) =>
        stores.states.addVersion(newVersion(other.id, other.vine.id)),
      );
      const pruned = await suite.asOwner(owner.id, (stores) => stores.states.pruneVersions(owner.id, owner.vine.id, 2));
      expect([...pruned].sort()).toEqual(
        versions
          .slice(0, 3)
          .map((version) => version.storage_key)
          .sort(),
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.states.listVersions(owner.id, owner.vine.id))).toEqual(
        versions.slice(3).reverse(),
      );
      expect(
        await suite.asOwner(owner.id, (stores) => stores.states.pruneVersions(owner.id, owner.vine.id, 2)),
      ).toEqual([]);
      expect(
        await suite.asOwner(owner.id, (stores) => stores.states.pruneVersions(owner.id, other.vine.id, 0)),
      ).toEqual([]);
      expect(await suite.asOwner(other.id, (stores) => stores.states.listVersions(other.id, other.vine.id))).toEqual([
        foreign,
      ]);
    });
  });

  describe('StateStore locks', () => {
    const suite = useStoreSuite(open);

    it('takes a free lock, keeps its info intact, and refuses a second one, naming the holder', async () => {
      const owner = await suite.seedOwner();
      expect(await suite.asOwner(owner.id, (stores) => stores.states.getLock(owner.id, owner.vine.id))).toBeNull();
      const lock = newLock(owner.id, owner.vine.id);
      expect(await suite.asOwner(owner.id, (stores) => stores.states.acquireLock(lock))).toEqual({ acquired: true });
      expect(await suite.asOwner(owner.id, (stores) => stores.states.getLock(owner.id, owner.vine.id))).toEqual(lock);
      const second = newLock(owner.id, owner.vine.id);
      expect(await suite.asOwner(owner.id, (stores) => stores.states.acquireLock(second))).toEqual({
        acquired: false,
        current: lock,
      });
    });

    it('releases only for the holding lock id, after which the lock can be taken again', async () => {
      const owner = await suite.seedOwner();
      const lock = newLock(owner.id, owner.vine.id);
      await suite.asOwner(owner.id, (stores) => stores.states.acquireLock(lock));
      expect(
        await suite.asOwner(owner.id, (stores) => stores.states.releaseLock(owner.id, owner.vine.id, 'not-the-id')),
      ).toBe(false);
      expect(await suite.asOwner(owner.id, (stores) => stores.states.getLock(owner.id, owner.vine.id))).toEqual(lock);
      expect(
        await suite.asOwner(owner.id, (stores) => stores.states.releaseLock(owner.id, owner.vine.id, lock.lock_id)),
      ).toBe(true);
      expect(await suite.asOwner(owner.id, (stores) => stores.states.getLock(owner.id, owner.vine.id))).toBeNull();
      expect(
        await suite.asOwner(owner.id, (stores) => stores.states.releaseLock(owner.id, owner.vine.id, lock.lock_id)),
      ).toBe(false);
      const next = newLock(owner.id, owner.vine.id);
      expect(await suite.asOwner(owner.id, (stores) => stores.states.acquireLock(next))).toEqual({ acquired: true });
    });

    it('gives the lock to exactly one of many concurrent lockers', async () => {
      const owner = await suite.seedOwner();
      const locks = Array.from({ length: 6 }, () => newLock(owner.id, owner.vine.id));
      const outcomes = await Promise.all(
        locks.map((lock) => suite.asOwner(owner.id, (stores) => stores.states.acquireLock(lock))),
      );
      const winners = locks.filter((_, i) => outcomes[i]?.acquired);
      expect(winners).toHaveLength(1);
      for (const outcome of outcomes) {
        if (!outcome.acquired) expect(outcome.current).toEqual(winners[0]);
      }
    });

    it("never shows, takes or releases one owner's lock for another", async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const lock = newLock(a.id, a.vine.id);
      await suite.asOwner(a.id, (stores) => stores.states.acquireLock(lock));
      expect(await suite.asOwner(b.id, (stores) => stores.states.getLock(b.id, a.vine.id))).toBeNull();
      expect(await suite.asOwner(b.id, (stores) => stores.states.releaseLock(b.id, a.vine.id, lock.lock_id))).toBe(
        false,
      );
      const error = await rejectionOf(
        suite.asOwner(b.id, (stores) => stores.states.acquireLock(newLock(b.id, a.vine.id))),
      );
      expect(error).toBeInstanceOf(NotFoundError);
      expect(await suite.asOwner(a.id, (stores) => stores.states.getLock(a.id, a.vine.id))).toEqual(lock);
    });
  });
}
