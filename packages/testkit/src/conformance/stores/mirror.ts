import type { MirrorArchive } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, uuid } from './fixtures.js';
import { expectConflict, type OpenStoreHarness, useStoreSuite } from './harness.js';

export function newMirrorArchive(ownerId: string, overrides: Partial<MirrorArchive> = {}): MirrorArchive {
  const id = overrides.id ?? uuid();
  return {
    id,
    owner_id: ownerId,
    hostname: 'registry.opentofu.org',
    namespace: 'hashicorp',
    type: 'null',
    version: '3.2.4',
    os: 'linux',
    arch: 'amd64',
    storage_key: `registry/mirror/${ownerId}/${id}.zip`,
    size: 1234,
    sha256: 'a'.repeat(64),
    h1: 'h1:c29tZSBoYXNo',
    origin: 'pushed',
    created_by: ownerId,
    created_at: at(1),
    ...overrides,
  };
}

export function describeMirrorStoreConformance(open: OpenStoreHarness): void {
  describe('MirrorStore (issue 28)', () => {
    const suite = useStoreSuite(open);

    it("records archives, finds one by its address, lists a provider's versions and the owner's providers", async () => {
      const owner = await suite.seedOwner();
      const linux = newMirrorArchive(owner.id, { created_at: at(1) });
      const darwin = newMirrorArchive(owner.id, { os: 'darwin', arch: 'arm64', created_at: at(2) });
      const older = newMirrorArchive(owner.id, { version: '3.2.3', created_at: at(3) });
      const random = newMirrorArchive(owner.id, {
        type: 'random',
        version: '3.6.0',
        origin: 'pulled',
        created_by: null,
        created_at: at(4),
      });
      for (const archive of [linux, darwin, older, random]) {
        expect(await suite.asOwner(owner.id, (stores) => stores.mirror.insert(archive))).toEqual(archive);
      }
      const provider = { hostname: 'registry.opentofu.org', namespace: 'hashicorp', type: 'null' };
      await suite.asOwner(owner.id, async (stores) => {
        expect(
          await stores.mirror.find(owner.id, { ...provider, version: '3.2.4', os: 'darwin', arch: 'arm64' }),
        ).toEqual(darwin);
        expect(
          await stores.mirror.find(owner.id, { ...provider, version: '3.2.4', os: 'windows', arch: 'amd64' }),
        ).toBeNull();
        expect(await stores.mirror.get(owner.id, older.id)).toEqual(older);
        expect((await stores.mirror.archives(owner.id, provider)).map((a) => a.id)).toEqual([
          linux.id,
          darwin.id,
          older.id,
        ]);
        expect((await stores.mirror.archives(owner.id, provider, '3.2.4')).map((a) => a.id)).toEqual([
          linux.id,
          darwin.id,
        ]);
        expect(await stores.mirror.providers(owner.id)).toEqual([provider, { ...provider, type: 'random' }]);
        const page = await stores.mirror.page(owner.id, { limit: 3 });
        expect(page.items.map((a) => a.id)).toEqual([random.id, older.id, darwin.id]);
        expect(page.next).not.toBeNull();
        expect((await stores.mirror.storageKeys(owner.id)).sort()).toEqual(
          [linux, darwin, older, random].map((a) => a.storage_key).sort(),
        );
      });
    });

    it('refuses a second archive at a taken address (409 mirror_archive_exists), and deletes once', async () => {
      const owner = await suite.seedOwner();
      const first = newMirrorArchive(owner.id);
      await suite.asOwner(owner.id, (stores) => stores.mirror.insert(first));
      await expectConflict(
        suite.asOwner(owner.id, (stores) =>
          stores.mirror.insert(newMirrorArchive(owner.id, { sha256: 'b'.repeat(64) })),
        ),
        'mirror_archive_exists',
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.mirror.delete(owner.id, first.id))).toBe(true);
      expect(await suite.asOwner(owner.id, (stores) => stores.mirror.delete(owner.id, first.id))).toBe(false);
      expect(await suite.asOwner(owner.id, (stores) => stores.mirror.get(owner.id, first.id))).toBeNull();
    });

    it("keeps owners apart: another owner's archives are neither seen nor deleted", async () => {
      const owner = await suite.seedOwner();
      const other = await suite.seedOwner();
      const archive = newMirrorArchive(owner.id);
      await suite.asOwner(owner.id, (stores) => stores.mirror.insert(archive));
      // The same address is free for another owner.
      await suite.asOwner(other.id, (stores) => stores.mirror.insert(newMirrorArchive(other.id)));
      await suite.asOwner(other.id, async (stores) => {
        expect(await stores.mirror.get(owner.id, archive.id)).toBeNull();
        expect(await stores.mirror.providers(owner.id)).toEqual([]);
        expect(await stores.mirror.delete(owner.id, archive.id)).toBe(false);
      });
      expect(await suite.asOwner(owner.id, (stores) => stores.mirror.get(owner.id, archive.id))).toEqual(archive);
    });
  });
}
