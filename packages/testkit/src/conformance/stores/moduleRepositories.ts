import type { ModuleRepository } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, newUser, uuid } from './fixtures.js';
import { type OpenStoreHarness, useStoreSuite } from './harness.js';

export function newModuleRepository(ownerId: string, overrides: Partial<ModuleRepository> = {}): ModuleRepository {
  return {
    id: uuid(),
    owner_id: ownerId,
    name: 'vpc',
    system: 'aws',
    provider: 'github',
    repository: 'acme-platform/terraform-aws-vpc',
    webhook_mode: 'auto',
    hook_id: '4242',
    webhook_secret_sealed: 'sealed:secret',
    connected_by: ownerId,
    last_tag: null,
    created_at: at(1),
    updated_at: at(1),
    ...overrides,
  };
}

/** Modules published from git tags (issue 28). */
export function describeModuleRepositoryStoreConformance(open: OpenStoreHarness): void {
  describe('ModuleRepositoryStore', () => {
    const suite = useStoreSuite(open);
    const newOwner = () => suite.asSystem((stores) => stores.users.create(newUser()));

    it("puts, replaces (keeping id and creation), lists and deletes an owner's module repositories", async () => {
      const a = await newOwner();
      const b = await newOwner();
      const vpc = newModuleRepository(a.id);
      const dns = newModuleRepository(a.id, {
        name: 'dns',
        system: 'google',
        provider: 'gitlab',
        repository: 'acme/dns',
      });
      expect(await suite.asOwner(a.id, (stores) => stores.moduleRepositories.put(vpc))).toEqual(vpc);
      await suite.asOwner(a.id, (stores) => stores.moduleRepositories.put(dns));
      expect(await suite.asOwner(a.id, (stores) => stores.moduleRepositories.get(a.id, 'vpc', 'aws'))).toEqual(vpc);
      expect(await suite.asOwner(b.id, (stores) => stores.moduleRepositories.get(a.id, 'vpc', 'aws'))).toBeNull();
      expect(await suite.asOwner(b.id, (stores) => stores.moduleRepositories.list(a.id))).toEqual([]);

      const replaced = newModuleRepository(a.id, {
        repository: 'acme-platform/vpc-module',
        webhook_mode: 'manual',
        hook_id: null,
        created_at: at(5),
        updated_at: at(5),
      });
      const stored = await suite.asOwner(a.id, (stores) => stores.moduleRepositories.put(replaced));
      expect(stored).toEqual({ ...replaced, id: vpc.id, created_at: vpc.created_at });
      expect(
        (await suite.asOwner(a.id, (stores) => stores.moduleRepositories.list(a.id))).map(
          (r) => `${r.name}/${r.system}`,
        ),
      ).toEqual(['dns/google', 'vpc/aws']);

      expect(await suite.asOwner(b.id, (stores) => stores.moduleRepositories.delete(a.id, vpc.id))).toBe(false);
      expect(await suite.asOwner(a.id, (stores) => stores.moduleRepositories.delete(a.id, vpc.id))).toBe(true);
      expect(await suite.asOwner(a.id, (stores) => stores.moduleRepositories.get(a.id, 'vpc', 'aws'))).toBeNull();
    });

    it('finds one for a delivery, whoever owns it, and records what its newest tag did', async () => {
      const a = await newOwner();
      const repository = newModuleRepository(a.id);
      await suite.asOwner(a.id, (stores) => stores.moduleRepositories.put(repository));
      expect(await suite.asSystem((stores) => stores.moduleRepositories.findForDelivery(repository.id))).toEqual(
        repository,
      );
      expect(await suite.asSystem((stores) => stores.moduleRepositories.findForDelivery(uuid()))).toBeNull();
      const result = {
        tag: 'v1.2.0',
        commit_sha: '8457785ada4ab6182c16fbac60586081edf51999',
        outcome: 'published' as const,
        version: '1.2.0',
        message: null,
        at: at(3),
      };
      await suite.asSystem((stores) => stores.moduleRepositories.recordTag(a.id, repository.id, result));
      expect(
        (await suite.asOwner(a.id, (stores) => stores.moduleRepositories.get(a.id, 'vpc', 'aws')))?.last_tag,
      ).toEqual(result);
    });
  });
}
