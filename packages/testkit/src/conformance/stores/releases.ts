import { describe, expect, it } from 'vitest';
import { at, later, newJob, newPlanArtifact, newRelease, uuid } from './fixtures.js';
import { attemptOnOthersRecord, expectConflict, type OpenStoreHarness, useStoreSuite } from './harness.js';

export function describeReleaseAndArtifactStoreConformance(open: OpenStoreHarness): void {
  describe('ReleaseStore', () => {
    const suite = useStoreSuite(open);

    it('publishes a release and reads it back', async () => {
      const release = newRelease('1.2.3-beta.1+build.5');
      expect(await suite.asSystem((stores) => stores.releases.create(release))).toEqual(release);
      expect(await suite.asSystem((stores) => stores.releases.get(release.version))).toEqual(release);
      expect(await suite.asSystem((stores) => stores.releases.get('9.9.9'))).toBeNull();
    });

    it('refuses a version published twice (release_exists) and keeps the first', async () => {
      const release = await suite.asSystem((stores) => stores.releases.create(newRelease('2.0.0')));
      await expectConflict(
        suite.asSystem((stores) => stores.releases.create(newRelease('2.0.0', { release_notes: 'again' }))),
        'release_exists',
      );
      expect(await suite.asSystem((stores) => stores.releases.list())).toEqual([release]);
    });

    it('lists newest first', async () => {
      const releases = [
        newRelease('1.0.0', { published_at: at(1) }),
        newRelease('1.10.0', { published_at: at(30) }),
        newRelease('1.2.0', { published_at: at(2) }),
      ];
      await suite.asSystem(async (stores) => {
        for (const release of releases) await stores.releases.create(release);
      });
      const listed = await suite.asSystem((stores) => stores.releases.list());
      expect(listed.map((release) => release.version)).toEqual(['1.10.0', '1.2.0', '1.0.0']);
    });

    it('shows releases to every owner', async () => {
      const owner = await suite.seedOwner();
      const release = await suite.asSystem((stores) => stores.releases.create(newRelease('3.0.0')));
      expect(await suite.asOwner(owner.id, (stores) => stores.releases.list())).toEqual([release]);
      expect(await suite.asOwner(owner.id, (stores) => stores.releases.get('3.0.0'))).toEqual(release);
    });
  });

  describe('PlanArtifactStore', () => {
    const suite = useStoreSuite(open);

    it('records an artifact and reads it back, a 50 MiB size intact', async () => {
      const owner = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      const artifact = newPlanArtifact(owner.id, job.id);
      expect(await suite.asOwner(owner.id, (stores) => stores.planArtifacts.save(artifact))).toEqual(artifact);
      expect(await suite.asOwner(owner.id, (stores) => stores.planArtifacts.get(owner.id, job.id))).toEqual(artifact);
      expect(await suite.asOwner(owner.id, (stores) => stores.planArtifacts.get(owner.id, uuid()))).toBeNull();
    });

    it('replaces an earlier upload of the same job', async () => {
      const owner = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      await suite.asOwner(owner.id, (stores) => stores.planArtifacts.save(newPlanArtifact(owner.id, job.id)));
      const second = newPlanArtifact(owner.id, job.id, { size: 7, sha256: 'c'.repeat(64), created_at: later() });
      expect(await suite.asOwner(owner.id, (stores) => stores.planArtifacts.save(second))).toEqual(second);
      expect(await suite.asOwner(owner.id, (stores) => stores.planArtifacts.get(owner.id, job.id))).toEqual(second);
    });

    it("never shows or replaces one owner's artifact for another", async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const job = await suite.asOwner(a.id, (stores) => stores.jobs.create(newJob(a.id, a.vine)));
      const artifact = await suite.asOwner(a.id, (stores) => stores.planArtifacts.save(newPlanArtifact(a.id, job.id)));
      expect(await suite.asOwner(b.id, (stores) => stores.planArtifacts.get(b.id, job.id))).toBeNull();
      await attemptOnOthersRecord(
        suite.asOwner(b.id, (stores) =>
          stores.planArtifacts.save(newPlanArtifact(b.id, job.id, { storage_key: 'plans/evil', size: 1 })),
        ),
      );
      expect(await suite.asOwner(a.id, (stores) => stores.planArtifacts.get(a.id, job.id))).toEqual(artifact);
    });

    it("records a plan's change document beside its plan, kept when the plan is saved again", async () => {
      const owner = await suite.seedOwner();
      const other = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      const changes = {
        job_id: job.id,
        owner_id: owner.id,
        storage_key: `plans/${owner.id}/${job.id}/changes.json`,
        size: 1234,
        sha256: 'd'.repeat(64),
      };
      // No plan recorded yet: nothing to attach the document to.
      await expect(
        suite.asOwner(owner.id, (stores) => stores.planArtifacts.saveChanges(changes)),
      ).rejects.toMatchObject({ code: 'plan_artifact_not_found' });
      await suite.asOwner(owner.id, (stores) => stores.planArtifacts.save(newPlanArtifact(owner.id, job.id)));
      expect(await suite.asOwner(owner.id, (stores) => stores.planArtifacts.getChanges(owner.id, job.id))).toBeNull();
      expect(await suite.asOwner(owner.id, (stores) => stores.planArtifacts.saveChanges(changes))).toEqual(changes);
      await suite.asOwner(owner.id, (stores) =>
        stores.planArtifacts.save(newPlanArtifact(owner.id, job.id, { size: 9, created_at: later() })),
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.planArtifacts.getChanges(owner.id, job.id))).toEqual(
        changes,
      );
      expect(await suite.asOwner(other.id, (stores) => stores.planArtifacts.getChanges(other.id, job.id))).toBeNull();
      await expect(
        suite.asOwner(other.id, (stores) =>
          stores.planArtifacts.saveChanges({ ...changes, owner_id: other.id, storage_key: 'plans/evil' }),
        ),
      ).rejects.toMatchObject({ code: 'plan_artifact_not_found' });
      expect(await suite.asOwner(owner.id, (stores) => stores.planArtifacts.getChanges(owner.id, job.id))).toEqual(
        changes,
      );
    });
  });
}
