import type { ConfigurationVersion } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, uuid } from './fixtures.js';
import { attemptOnOthersRecord, type OpenStoreHarness, useStoreSuite } from './harness.js';

const COMMIT = 'a'.repeat(40);

function newVersion(
  ownerId: string,
  vineId: string,
  overrides: Partial<ConfigurationVersion> = {},
): ConfigurationVersion {
  const id = uuid();
  return {
    id,
    owner_id: ownerId,
    vine_id: vineId,
    source: 'git',
    provider: 'github',
    repository: 'acme/infra',
    commit_sha: COMMIT,
    ref: null,
    status: 'uploaded',
    storage_key: `configuration-versions/${ownerId}/${id}.tar.gz`,
    sha256: 'b'.repeat(64),
    size: 5_368_709_120,
    strip_components: 1,
    speculative: false,
    auto_queue_runs: false,
    provisional: false,
    upload_started_at: null,
    error_code: null,
    error_message: null,
    created_by: null,
    created_at: at(1),
    updated_at: at(1),
    ...overrides,
  };
}

export function describeConfigurationVersionStoreConformance(open: OpenStoreHarness): void {
  describe('ConfigurationVersionStore (issue 23)', () => {
    const suite = useStoreSuite(open);

    it('records a version, moves its status, and finds the newest uploaded one of a commit', async () => {
      const owner = await suite.seedOwner();
      const pending = newVersion(owner.id, owner.vine.id, {
        status: 'pending',
        storage_key: null,
        sha256: null,
        size: null,
        created_at: at(2),
        updated_at: at(2),
      });
      expect(await suite.asOwner(owner.id, (stores) => stores.configurationVersions.save(pending))).toEqual(pending);
      const older = await suite.asOwner(owner.id, (stores) =>
        stores.configurationVersions.save(newVersion(owner.id, owner.vine.id)),
      );
      expect(
        await suite.asOwner(owner.id, (stores) =>
          stores.configurationVersions.findUploaded(owner.id, owner.vine.id, COMMIT),
        ),
      ).toEqual(older);
      const uploaded = {
        ...pending,
        status: 'uploaded' as const,
        storage_key: 'k',
        sha256: 'c'.repeat(64),
        size: 9,
        updated_at: at(3),
      };
      expect(await suite.asOwner(owner.id, (stores) => stores.configurationVersions.save(uploaded))).toEqual(uploaded);
      expect(await suite.asOwner(owner.id, (stores) => stores.configurationVersions.get(owner.id, pending.id))).toEqual(
        uploaded,
      );
      expect(
        await suite.asOwner(owner.id, (stores) =>
          stores.configurationVersions.findUploaded(owner.id, owner.vine.id, COMMIT),
        ),
      ).toEqual(uploaded);
      expect(
        await suite.asOwner(owner.id, (stores) =>
          stores.configurationVersions.findUploaded(owner.id, owner.vine.id, 'd'.repeat(40)),
        ),
      ).toBeNull();
      expect(
        (await suite.asOwner(owner.id, (stores) => stores.configurationVersions.storageKeys(owner.id))).sort(),
      ).toEqual([older.storage_key, 'k'].sort());
    });

    it('starts the one upload of a pending version once, keeps its options, and lists a vine newest first (issue 27)', async () => {
      const owner = await suite.seedOwner();
      const upload = newVersion(owner.id, owner.vine.id, {
        source: 'upload',
        provider: null,
        repository: null,
        commit_sha: null,
        status: 'pending',
        storage_key: null,
        sha256: null,
        size: null,
        strip_components: 0,
        speculative: true,
        auto_queue_runs: true,
        provisional: false,
        created_at: at(5),
        updated_at: at(5),
      });
      const older = newVersion(owner.id, owner.vine.id, { created_at: at(4), updated_at: at(4) });
      await suite.asOwner(owner.id, async (stores) => {
        await stores.configurationVersions.save(older);
        await stores.configurationVersions.save(upload);
      });
      const start = () =>
        suite.asOwner(owner.id, (stores) => stores.configurationVersions.startUpload(owner.id, upload.id, at(6)));
      expect(await start()).toBe(true);
      expect(await start()).toBe(false);
      expect(
        await suite.asOwner(owner.id, (stores) => stores.configurationVersions.startUpload(owner.id, older.id, at(6))),
      ).toBe(false);
      const stored = await suite.asOwner(owner.id, (stores) => stores.configurationVersions.get(owner.id, upload.id));
      expect(stored).toEqual({ ...upload, upload_started_at: at(6) });
      // A status change keeps when the upload began.
      const uploaded = { ...(stored as ConfigurationVersion), status: 'uploaded' as const, updated_at: at(7) };
      await suite.asOwner(owner.id, (stores) => stores.configurationVersions.save(uploaded));
      const listed = await suite.asOwner(owner.id, (stores) =>
        stores.configurationVersions.listForVine(owner.id, owner.vine.id, 10),
      );
      expect(listed.map((version) => version.id)).toEqual([upload.id, older.id]);
      expect(listed[0]).toEqual(uploaded);
      const other = await suite.seedOwner();
      expect(
        await suite.asOwner(other.id, (stores) =>
          stores.configurationVersions.listForVine(owner.id, owner.vine.id, 10),
        ),
      ).toEqual([]);
      expect(
        await suite.asOwner(other.id, (stores) => stores.configurationVersions.startUpload(owner.id, upload.id, at(8))),
      ).toBe(false);
    });

    it("never shows one owner's versions to another, nor records one against another's vine", async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const version = await suite.asOwner(a.id, (stores) =>
        stores.configurationVersions.save(newVersion(a.id, a.vine.id)),
      );
      expect(await suite.asOwner(b.id, (stores) => stores.configurationVersions.get(b.id, version.id))).toBeNull();
      expect(await suite.asOwner(b.id, (stores) => stores.configurationVersions.get(a.id, version.id))).toBeNull();
      expect(
        await suite.asOwner(b.id, (stores) => stores.configurationVersions.findUploaded(a.id, a.vine.id, COMMIT)),
      ).toBeNull();
      await attemptOnOthersRecord(
        suite.asOwner(b.id, (stores) => stores.configurationVersions.save(newVersion(b.id, a.vine.id))),
      );
    });

    it('go with their vine: its deletion answers their keys', async () => {
      const owner = await suite.seedOwner();
      const version = await suite.asOwner(owner.id, (stores) =>
        stores.configurationVersions.save(newVersion(owner.id, owner.vine.id)),
      );
      const keys = await suite.asOwner(owner.id, (stores) => stores.vines.delete(owner.id, owner.vine.id));
      expect(keys).toContain(version.storage_key);
      expect(
        await suite.asOwner(owner.id, (stores) => stores.configurationVersions.get(owner.id, version.id)),
      ).toBeNull();
    });
  });
}
