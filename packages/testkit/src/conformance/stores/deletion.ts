import type { NewStateVersion } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { later, newJob, newVine, newVineyard, uuid } from './fixtures.js';
import { type OpenStoreHarness, rejectionOf, useStoreSuite } from './harness.js';

function version(ownerId: string, vineId: string): NewStateVersion {
  return {
    owner_id: ownerId,
    vine_id: vineId,
    serial: 1,
    lineage: uuid(),
    size: 10,
    sha256: 'e'.repeat(64),
    storage_key: `state/${ownerId}/${vineId}/${uuid()}.tfstate`,
    job_id: null,
    created_by: null,
    upload_id: null,
    created_at: later(),
  };
}

/** Deleting vines and vineyards as a person does (issue 25): gone from reads, names free, state kept until purged. */
export function describeDeletionConformance(open: OpenStoreHarness): void {
  describe('VineStore.markDeleted and purgeDeleted, VineyardStore.rename and markDeleted', () => {
    const suite = useStoreSuite(open);

    it('hides a deleted vine from every read, frees its names, keeps its jobs, and keeps its state until purged', async () => {
      const owner = await suite.seedOwner();
      const vine = owner.vine;
      const job = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, vine)));
      const stored = await suite.asOwner(owner.id, (stores) => stores.states.addVersion(version(owner.id, vine.id)));
      await suite.asOwner(owner.id, (stores) =>
        stores.vines.markDeleted(owner.id, vine.id, '2030-01-01T00:00:00.000Z', '2030-01-31T00:00:00.000Z'),
      );
      const reads = await suite.asOwner(owner.id, async (stores) => ({
        byId: await stores.vines.get(owner.id, vine.id),
        byName: await stores.vines.findByName(owner.id, vine.name),
        byProject: await stores.vines.findByProjectName(owner.id, vine.project_name),
        list: await stores.vines.list(owner.id),
        page: (await stores.vines.page([owner.id], { limit: 10 })).items,
        job: (await stores.jobs.get(owner.id, job.id))?.id,
        version: (await stores.states.getVersion(owner.id, stored.id))?.id,
      }));
      expect(reads).toEqual({
        byId: null,
        byName: null,
        byProject: null,
        list: [],
        page: [],
        job: job.id,
        version: stored.id,
      });
      // Deleting it again, or changing it, finds nothing.
      expect(
        await rejectionOf(
          suite.asOwner(owner.id, (stores) => stores.vines.markDeleted(owner.id, vine.id, later(), null)),
        ),
      ).toMatchObject({ code: 'configuration_not_found' });
      // Its name and project name are free.
      const again = await suite.asOwner(owner.id, (stores) =>
        stores.vines.create(newVine(owner.id, owner.vineyard.id, { name: vine.name, project_name: vine.project_name })),
      );
      expect(again.name).toBe(vine.name);

      // Not yet due: nothing purged.
      expect(await suite.asSystem((stores) => stores.vines.purgeDeleted('2030-01-30T23:59:59.000Z', 10))).toEqual([]);
      expect(await suite.asSystem((stores) => stores.vines.purgeDeleted('2030-01-31T00:00:00.000Z', 10))).toEqual([
        stored.storage_key,
      ]);
      expect(await suite.asOwner(owner.id, (stores) => stores.states.getVersion(owner.id, stored.id))).toBeNull();
      // Purged once: the next pass has nothing, and the job stays.
      expect(await suite.asSystem((stores) => stores.vines.purgeDeleted('2031-01-01T00:00:00.000Z', 10))).toEqual([]);
      expect((await suite.asOwner(owner.id, (stores) => stores.jobs.get(owner.id, job.id)))?.id).toBe(job.id);
    });

    it('keeps the state of a vine deleted without a purge time', async () => {
      const owner = await suite.seedOwner();
      const stored = await suite.asOwner(owner.id, (stores) =>
        stores.states.addVersion(version(owner.id, owner.vine.id)),
      );
      await suite.asOwner(owner.id, (stores) => stores.vines.markDeleted(owner.id, owner.vine.id, later(), null));
      expect(await suite.asSystem((stores) => stores.vines.purgeDeleted('2999-01-01T00:00:00.000Z', 10))).toEqual([]);
      expect((await suite.asOwner(owner.id, (stores) => stores.states.getVersion(owner.id, stored.id)))?.id).toBe(
        stored.id,
      );
    });

    it('changes the project name, engine and cloud identity of a vine; a project name taken is refused', async () => {
      const owner = await suite.seedOwner();
      const other = await suite.asOwner(owner.id, (stores) =>
        stores.vines.create(newVine(owner.id, owner.vineyard.id)),
      );
      const updated = await suite.asOwner(owner.id, (stores) =>
        stores.vines.updateSettings(
          owner.id,
          owner.vine.id,
          { project_name: 'renamed-project', engine: { name: 'terraform', version: '1.9.8' }, cloud_identity_id: null },
          later(),
        ),
      );
      expect(updated).toMatchObject({
        project_name: 'renamed-project',
        engine: { name: 'terraform', version: '1.9.8' },
      });
      expect(
        await rejectionOf(
          suite.asOwner(owner.id, (stores) =>
            stores.vines.updateSettings(owner.id, other.id, { project_name: 'renamed-project' }, later()),
          ),
        ),
      ).toMatchObject({ code: 'project_name_taken' });
    });

    it('renames a vineyard, refuses a taken name, and deletes one so that its name is free', async () => {
      const owner = await suite.seedOwner();
      const second = await suite.asOwner(owner.id, (stores) => stores.vineyards.create(newVineyard(owner.id)));
      const renamed = await suite.asOwner(owner.id, (stores) =>
        stores.vineyards.rename(owner.id, second.id, 'renamed'),
      );
      expect(renamed).toMatchObject({ id: second.id, name: 'renamed' });
      expect(
        await rejectionOf(
          suite.asOwner(owner.id, (stores) => stores.vineyards.rename(owner.id, second.id, owner.vineyard.name)),
        ),
      ).toMatchObject({ code: 'vineyard_name_taken' });
      await suite.asOwner(owner.id, (stores) => stores.vineyards.markDeleted(owner.id, second.id, later()));
      const reads = await suite.asOwner(owner.id, async (stores) => ({
        get: await stores.vineyards.get(owner.id, second.id),
        list: (await stores.vineyards.list(owner.id)).map((vineyard) => vineyard.id),
      }));
      expect(reads).toEqual({ get: null, list: [owner.vineyard.id] });
      expect(
        await rejectionOf(suite.asOwner(owner.id, (stores) => stores.vineyards.rename(owner.id, second.id, 'x'))),
      ).toMatchObject({ code: 'vineyard_not_found' });
      const reused = await suite.asOwner(owner.id, (stores) =>
        stores.vineyards.create(newVineyard(owner.id, { name: 'renamed' })),
      );
      expect(reused.name).toBe('renamed');
    });
  });
}
