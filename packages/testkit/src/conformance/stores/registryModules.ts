import type { RegistryModule, RegistryModuleVersion } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, uuid } from './fixtures.js';
import { attemptOnOthersRecord, expectConflict, type OpenStoreHarness, useStoreSuite } from './harness.js';

export function newRegistryModule(ownerId: string, overrides: Partial<RegistryModule> = {}): RegistryModule {
  return {
    id: uuid(),
    owner_id: ownerId,
    name: 'vpc',
    system: 'aws',
    latest_version: null,
    created_at: at(1),
    updated_at: at(1),
    ...overrides,
  };
}

export function newRegistryModuleVersion(
  module: RegistryModule,
  version: string,
  overrides: Partial<RegistryModuleVersion> = {},
): RegistryModuleVersion {
  const id = uuid();
  return {
    id,
    owner_id: module.owner_id,
    module_id: module.id,
    version,
    storage_key: `registry/modules/${module.owner_id}/${id}.tar.gz`,
    size: 1234,
    sha256: 'a'.repeat(64),
    deprecated_at: null,
    deprecation_reason: null,
    published_by: module.owner_id,
    created_at: at(2),
    ...overrides,
  };
}

export function describeRegistryModuleStoreConformance(open: OpenStoreHarness): void {
  describe('RegistryModuleStore (issue 28)', () => {
    const suite = useStoreSuite(open);

    it('keeps one module per owner, name and system, pages them newest first, and updates the latest version', async () => {
      const owner = await suite.seedOwner();
      const vpc = newRegistryModule(owner.id, { created_at: at(1), updated_at: at(1) });
      const dns = newRegistryModule(owner.id, { name: 'dns', created_at: at(2), updated_at: at(2) });
      const vpcGoogle = newRegistryModule(owner.id, { system: 'google', created_at: at(3), updated_at: at(3) });
      for (const module of [vpc, dns, vpcGoogle]) {
        expect(await suite.asOwner(owner.id, (stores) => stores.registryModules.create(module))).toEqual(module);
      }
      await expectConflict(
        suite.asOwner(owner.id, (stores) => stores.registryModules.create(newRegistryModule(owner.id))),
        'already_exists',
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.registryModules.find(owner.id, 'vpc', 'aws'))).toEqual(
        vpc,
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.registryModules.find(owner.id, 'vpc', 'azure'))).toBe(
        null,
      );

      const first = await suite.asOwner(owner.id, (stores) => stores.registryModules.page(owner.id, { limit: 2 }));
      expect(first.items).toEqual([vpcGoogle, dns]);
      expect(first.next).not.toBe(null);
      const second = await suite.asOwner(owner.id, (stores) =>
        stores.registryModules.page(owner.id, { limit: 2, after: first.next ?? undefined }),
      );
      expect(second).toEqual({ items: [vpc], next: null });

      const updated = { ...vpc, latest_version: '1.2.0', updated_at: at(5) };
      expect(await suite.asOwner(owner.id, (stores) => stores.registryModules.update(updated))).toEqual(updated);
      expect(await suite.asOwner(owner.id, (stores) => stores.registryModules.find(owner.id, 'vpc', 'aws'))).toEqual(
        updated,
      );
    });

    it('records each version once, lists them oldest first, deprecates and deletes them, and deletes a module with its versions', async () => {
      const owner = await suite.seedOwner();
      const module = await suite.asOwner(owner.id, (stores) =>
        stores.registryModules.create(newRegistryModule(owner.id)),
      );
      const v1 = newRegistryModuleVersion(module, '1.0.0', { created_at: at(2) });
      const v2 = newRegistryModuleVersion(module, '1.2.0-rc.1', { created_at: at(3), size: 5_000_000_000 });
      expect(await suite.asOwner(owner.id, (stores) => stores.registryModules.createVersion(v1))).toEqual(v1);
      expect(await suite.asOwner(owner.id, (stores) => stores.registryModules.createVersion(v2))).toEqual(v2);
      await expectConflict(
        suite.asOwner(owner.id, (stores) =>
          stores.registryModules.createVersion(newRegistryModuleVersion(module, '1.0.0')),
        ),
        'module_version_exists',
      );
      expect(
        await suite.asOwner(owner.id, (stores) => stores.registryModules.getVersion(owner.id, module.id, '1.0.0')),
      ).toEqual(v1);
      expect(await suite.asOwner(owner.id, (stores) => stores.registryModules.getVersionById(owner.id, v2.id))).toEqual(
        v2,
      );
      expect(
        await suite.asOwner(owner.id, (stores) => stores.registryModules.listVersions(owner.id, module.id)),
      ).toEqual([v1, v2]);
      expect((await suite.asOwner(owner.id, (stores) => stores.registryModules.storageKeys(owner.id))).sort()).toEqual(
        [v1.storage_key, v2.storage_key].sort(),
      );

      const deprecated = await suite.asOwner(owner.id, (stores) =>
        stores.registryModules.setDeprecation(owner.id, v1.id, at(4), 'use 2.x'),
      );
      expect(deprecated).toEqual({ ...v1, deprecated_at: at(4), deprecation_reason: 'use 2.x' });
      const undone = await suite.asOwner(owner.id, (stores) =>
        stores.registryModules.setDeprecation(owner.id, v1.id, null, null),
      );
      expect(undone).toEqual(v1);

      expect(await suite.asOwner(owner.id, (stores) => stores.registryModules.deleteVersion(owner.id, v1.id))).toBe(
        true,
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.registryModules.deleteVersion(owner.id, v1.id))).toBe(
        false,
      );
      expect(
        await suite.asOwner(owner.id, (stores) => stores.registryModules.listVersions(owner.id, module.id)),
      ).toEqual([v2]);
      expect(await suite.asOwner(owner.id, (stores) => stores.registryModules.delete(owner.id, module.id))).toBe(true);
      expect(await suite.asOwner(owner.id, (stores) => stores.registryModules.getVersionById(owner.id, v2.id))).toBe(
        null,
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.registryModules.find(owner.id, 'vpc', 'aws'))).toBe(null);
    });

    it("never shows nor changes another owner's modules and versions", async () => {
      const ada = await suite.seedOwner();
      const bob = await suite.seedOwner();
      const module = await suite.asOwner(ada.id, (stores) => stores.registryModules.create(newRegistryModule(ada.id)));
      const version = newRegistryModuleVersion(module, '1.0.0');
      await suite.asOwner(ada.id, (stores) => stores.registryModules.createVersion(version));

      expect(await suite.asOwner(bob.id, (stores) => stores.registryModules.find(ada.id, 'vpc', 'aws'))).toBe(null);
      expect(await suite.asOwner(bob.id, (stores) => stores.registryModules.page(ada.id, { limit: 10 }))).toEqual({
        items: [],
        next: null,
      });
      expect(await suite.asOwner(bob.id, (stores) => stores.registryModules.getVersionById(ada.id, version.id))).toBe(
        null,
      );
      expect(await suite.asOwner(bob.id, (stores) => stores.registryModules.listVersions(ada.id, module.id))).toEqual(
        [],
      );
      // Bob's own module record cannot take a version into Ada's module.
      await attemptOnOthersRecord(
        suite.asOwner(bob.id, (stores) =>
          stores.registryModules.createVersion({ ...newRegistryModuleVersion(module, '9.9.9'), owner_id: bob.id }),
        ),
      );
      await attemptOnOthersRecord(
        suite.asOwner(bob.id, (stores) => stores.registryModules.setDeprecation(ada.id, version.id, at(9), 'x')),
      );
      await attemptOnOthersRecord(
        suite.asOwner(bob.id, (stores) => stores.registryModules.deleteVersion(ada.id, version.id)),
      );
      await attemptOnOthersRecord(suite.asOwner(bob.id, (stores) => stores.registryModules.delete(ada.id, module.id)));
      expect(await suite.asOwner(ada.id, (stores) => stores.registryModules.listVersions(ada.id, module.id))).toEqual([
        version,
      ]);
    });
  });
}
