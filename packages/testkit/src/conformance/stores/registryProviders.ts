import type {
  RegistryGpgKey,
  RegistryProvider,
  RegistryProviderPlatform,
  RegistryProviderVersion,
} from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, uuid } from './fixtures.js';
import { expectConflict, type OpenStoreHarness, type SeededOwner, useStoreSuite } from './harness.js';

function provider(owner: SeededOwner, type: string, seconds = 1): RegistryProvider {
  return { id: uuid(), owner_id: owner.id, type, created_by: owner.id, created_at: at(seconds) };
}

function version(owner: SeededOwner, providerId: string, name: string, seconds = 1): RegistryProviderVersion {
  return {
    id: uuid(),
    owner_id: owner.id,
    provider_id: providerId,
    version: name,
    protocols: ['5.0', '6.0'],
    shasums: `${'a'.repeat(64)}  terraform-provider-null_${name}_linux_amd64.zip\n`,
    shasums_signature: new Uint8Array([0x88, 0x75, 0x04, 0x00, 0xff, 0x01]),
    key_id: '51852D87348FFC4C',
    created_by: owner.id,
    created_at: at(seconds),
  };
}

function platform(owner: SeededOwner, versionId: string, os: string, arch: string): RegistryProviderPlatform {
  return {
    id: uuid(),
    owner_id: owner.id,
    version_id: versionId,
    os,
    arch,
    filename: `terraform-provider-null_1.0.0_${os}_${arch}.zip`,
    shasum: 'a'.repeat(64),
    size: 5_000_000_000,
    storage_key: `registry/providers/${owner.id}/${versionId}/${os}_${arch}.zip`,
    created_by: owner.id,
    created_at: at(3),
  };
}

function gpgKey(owner: SeededOwner, keyId: string, seconds = 1): RegistryGpgKey {
  return {
    id: uuid(),
    owner_id: owner.id,
    key_id: keyId,
    ascii_armor: `-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n${keyId}\n-----END PGP PUBLIC KEY BLOCK-----`,
    created_by: owner.id,
    created_at: at(seconds),
  };
}

export function describeRegistryProviderStoreConformance(open: OpenStoreHarness): void {
  describe('RegistryProviderStore (issue 28)', () => {
    const suite = useStoreSuite(open);

    it('makes a provider once per type, and pages the types in order', async () => {
      const owner = await suite.seedOwner();
      const first = await suite.asOwner(owner.id, (stores) =>
        stores.registryProviders.ensureProvider(provider(owner, 'null')),
      );
      const again = await suite.asOwner(owner.id, (stores) =>
        stores.registryProviders.ensureProvider(provider(owner, 'null', 2)),
      );
      expect(again).toEqual(first);
      await suite.asOwner(owner.id, async (stores) => {
        await stores.registryProviders.ensureProvider(provider(owner, 'aws'));
        await stores.registryProviders.ensureProvider(provider(owner, 'zeta'));
      });
      const page = await suite.asOwner(owner.id, (stores) => stores.registryProviders.listProviders(owner.id, 2, null));
      expect(page.map((p) => p.type)).toEqual(['aws', 'null']);
      const next = await suite.asOwner(owner.id, (stores) =>
        stores.registryProviders.listProviders(owner.id, 2, 'null'),
      );
      expect(next.map((p) => p.type)).toEqual(['zeta']);
    });

    it('keeps versions with their signature bytes and platforms; refuses a second of each; deletes a version with its platforms', async () => {
      const owner = await suite.seedOwner();
      const made = await suite.asOwner(owner.id, (stores) =>
        stores.registryProviders.ensureProvider(provider(owner, 'null')),
      );
      const v1 = version(owner, made.id, '1.0.0', 1);
      const v2 = version(owner, made.id, '1.1.0-beta.1', 2);
      expect(await suite.asOwner(owner.id, (stores) => stores.registryProviders.createVersion(v1))).toEqual(v1);
      await suite.asOwner(owner.id, (stores) => stores.registryProviders.createVersion(v2));
      await expectConflict(
        suite.asOwner(owner.id, (stores) => stores.registryProviders.createVersion({ ...v1, id: uuid() })),
        'provider_version_exists',
      );
      const linux = platform(owner, v1.id, 'linux', 'amd64');
      const darwin = platform(owner, v1.id, 'darwin', 'arm64');
      expect(await suite.asOwner(owner.id, (stores) => stores.registryProviders.addPlatform(linux))).toEqual(linux);
      await suite.asOwner(owner.id, (stores) => stores.registryProviders.addPlatform(darwin));
      await expectConflict(
        suite.asOwner(owner.id, (stores) => stores.registryProviders.addPlatform({ ...linux, id: uuid() })),
        'provider_platform_exists',
      );

      const found = await suite.asOwner(owner.id, (stores) =>
        stores.registryProviders.getVersion(owner.id, made.id, '1.0.0'),
      );
      expect(found).toEqual({ ...v1, platforms: [darwin, linux] });
      expect(found?.shasums_signature).toBeInstanceOf(Uint8Array);
      expect(
        await suite.asOwner(owner.id, (stores) => stores.registryProviders.getVersionById(owner.id, v1.id)),
      ).toEqual(found);
      const all = await suite.asOwner(owner.id, (stores) => stores.registryProviders.listVersions(owner.id, made.id));
      expect(all.map((v) => [v.version, v.platforms.length])).toEqual([
        ['1.0.0', 2],
        ['1.1.0-beta.1', 0],
      ]);
      expect(await suite.asOwner(owner.id, (stores) => stores.registryProviders.storageKeys(owner.id))).toEqual(
        [darwin.storage_key, linux.storage_key].sort(),
      );

      const deleted = await suite.asOwner(owner.id, (stores) =>
        stores.registryProviders.deleteVersion(owner.id, v1.id),
      );
      expect(deleted.sort()).toEqual([darwin.storage_key, linux.storage_key].sort());
      expect(
        await suite.asOwner(owner.id, (stores) => stores.registryProviders.getVersion(owner.id, made.id, '1.0.0')),
      ).toBe(null);
      expect(await suite.asOwner(owner.id, (stores) => stores.registryProviders.storageKeys(owner.id))).toEqual([]);
    });

    it('keeps GPG keys per owner, refuses a key id twice, deletes by key id', async () => {
      const owner = await suite.seedOwner();
      const other = await suite.seedOwner();
      const first = gpgKey(owner, '51852D87348FFC4C', 1);
      const second = gpgKey(owner, '34365D9472D7468F', 2);
      await suite.asOwner(owner.id, async (stores) => {
        await stores.registryProviders.addKey(first);
        await stores.registryProviders.addKey(second);
      });
      // Another owner may hold the same key.
      await suite.asOwner(other.id, (stores) => stores.registryProviders.addKey(gpgKey(other, first.key_id)));
      await expectConflict(
        suite.asOwner(owner.id, (stores) => stores.registryProviders.addKey({ ...first, id: uuid() })),
        'gpg_key_exists',
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.registryProviders.listKeys(owner.id))).toEqual([
        first,
        second,
      ]);
      expect(
        await suite.asOwner(owner.id, (stores) => stores.registryProviders.deleteKey(owner.id, first.key_id)),
      ).toBe(true);
      expect(
        await suite.asOwner(owner.id, (stores) => stores.registryProviders.deleteKey(owner.id, first.key_id)),
      ).toBe(false);
      expect(await suite.asOwner(owner.id, (stores) => stores.registryProviders.listKeys(owner.id))).toEqual([second]);
      expect(await suite.asOwner(other.id, (stores) => stores.registryProviders.listKeys(other.id))).toHaveLength(1);
    });

    it("never shows nor deletes another owner's providers and keys", async () => {
      const owner = await suite.seedOwner();
      const other = await suite.seedOwner();
      const made = await suite.asOwner(owner.id, (stores) =>
        stores.registryProviders.ensureProvider(provider(owner, 'null')),
      );
      const v1 = version(owner, made.id, '1.0.0');
      await suite.asOwner(owner.id, async (stores) => {
        await stores.registryProviders.createVersion(v1);
        await stores.registryProviders.addKey(gpgKey(owner, '51852D87348FFC4C'));
      });
      await suite.asOwner(other.id, async (stores) => {
        expect(await stores.registryProviders.getProvider(owner.id, 'null')).toBe(null);
        expect(await stores.registryProviders.getVersionById(owner.id, v1.id)).toBe(null);
        expect(await stores.registryProviders.listKeys(owner.id)).toEqual([]);
        expect(await stores.registryProviders.deleteKey(owner.id, '51852D87348FFC4C')).toBe(false);
        await stores.registryProviders.deleteVersion(owner.id, v1.id);
      });
      expect(
        await suite.asOwner(owner.id, (stores) => stores.registryProviders.getVersionById(owner.id, v1.id)),
      ).not.toBe(null);
      expect(await suite.asOwner(owner.id, (stores) => stores.registryProviders.listKeys(owner.id))).toHaveLength(1);
    });
  });
}
