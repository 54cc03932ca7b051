import type { Policy } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, newUser, uuid } from './fixtures.js';
import { type OpenStoreHarness, useStoreSuite } from './harness.js';

const MODULE = 'package trellis.test\n\ndeny contains msg if {\n  input.x == 1\n  msg := "x is 1"\n}\n';

export function newPolicy(ownerId: string, overrides: Partial<Policy> = {}): Policy {
  return {
    id: uuid(),
    owner_id: ownerId,
    created_by: ownerId,
    org_id: null,
    name: 'no-public-buckets',
    enforcement: 'mandatory',
    vineyard_id: null,
    version: 1,
    module: MODULE,
    created_at: at(1),
    updated_at: at(1),
    ...overrides,
  };
}

export function describePolicyStoreConformance(open: OpenStoreHarness): void {
  describe('PolicyStore', () => {
    const suite = useStoreSuite(open);
    const newOwner = () => suite.asSystem((stores) => stores.users.create(newUser()));

    it('creates, finds, pages and deletes policies, each owner seeing only its own', async () => {
      const user = await newOwner();
      const other = await newOwner();
      const first = newPolicy(user.id, { created_at: at(1), updated_at: at(1) });
      const second = newPolicy(user.id, {
        name: 'sizes',
        enforcement: 'advisory',
        created_at: at(2),
        updated_at: at(2),
      });
      await suite.asOwner(user.id, async (stores) => {
        expect(await stores.policies.create(first)).toEqual(first);
        await stores.policies.create(second);
      });
      const theirs = await suite.asOwner(other.id, (stores) => stores.policies.create(newPolicy(other.id)));
      expect(await suite.asOwner(user.id, (stores) => stores.policies.find(first.id))).toEqual(first);
      expect(await suite.asOwner(user.id, (stores) => stores.policies.find(theirs.id))).toBeNull();
      const page = await suite.asOwner(user.id, (stores) => stores.policies.page(user.id, { limit: 1 }));
      expect(page.items).toEqual([second]);
      const rest = await suite.asOwner(user.id, (stores) =>
        stores.policies.page(user.id, { limit: 1, after: page.next ?? undefined }),
      );
      expect(rest).toEqual({ items: [first], next: null });
      expect(await suite.asOwner(other.id, (stores) => stores.policies.delete(user.id, first.id))).toBe(false);
      expect(await suite.asOwner(user.id, (stores) => stores.policies.delete(user.id, first.id))).toBe(true);
      expect(await suite.asOwner(user.id, (stores) => stores.policies.find(first.id))).toBeNull();
      expect(await suite.asOwner(user.id, (stores) => stores.policies.versions(user.id, first.id))).toEqual([]);
    });

    it('keeps every version; the policy keeps its creator; a second update of the same version fails', async () => {
      const user = await newOwner();
      const editor = uuid();
      const policy = newPolicy(user.id);
      await suite.asOwner(user.id, (stores) => stores.policies.create(policy));
      const next: Policy = {
        ...policy,
        version: 2,
        module: MODULE.replace('x is 1', 'x is one'),
        enforcement: 'advisory',
        created_by: editor,
        updated_at: at(5),
      };
      const updated = await suite.asOwner(user.id, (stores) => stores.policies.update(next));
      expect(updated).toEqual({ ...next, created_by: user.id });
      expect(await suite.asOwner(user.id, (stores) => stores.policies.find(policy.id))).toEqual(updated);
      const versions = await suite.asOwner(user.id, (stores) => stores.policies.versions(user.id, policy.id));
      expect(versions).toEqual([
        {
          policy_id: policy.id,
          owner_id: user.id,
          version: 1,
          name: policy.name,
          enforcement: 'mandatory',
          module: MODULE,
          created_by: user.id,
          created_at: at(1),
        },
        {
          policy_id: policy.id,
          owner_id: user.id,
          version: 2,
          name: policy.name,
          enforcement: 'advisory',
          module: next.module,
          created_by: editor,
          created_at: at(5),
        },
      ]);
      await expect(suite.asOwner(user.id, (stores) => stores.policies.update(next))).rejects.toMatchObject({
        code: 'already_exists',
      });
      expect(
        await suite.asOwner(user.id, (stores) => stores.policies.update({ ...next, id: uuid(), version: 3 })),
      ).toBeNull();
    });

    it("lists the policies of a vineyard's vines: the vineyard's own and the owner-wide ones, oldest first", async () => {
      const user = await newOwner();
      const other = await newOwner();
      const yard = uuid();
      const wide = newPolicy(user.id, { name: 'wide', created_at: at(1) });
      const own = newPolicy(user.id, { name: 'own', vineyard_id: yard, created_at: at(2) });
      const elsewhere = newPolicy(user.id, { name: 'elsewhere', vineyard_id: uuid(), created_at: at(3) });
      await suite.asOwner(user.id, async (stores) => {
        for (const p of [wide, own, elsewhere]) await stores.policies.create(p);
      });
      await suite.asOwner(other.id, (stores) => stores.policies.create(newPolicy(other.id)));
      const names = async (vineyard: string | null) =>
        (await suite.asOwner(user.id, (stores) => stores.policies.listApplicable(user.id, vineyard))).map(
          (p) => p.name,
        );
      expect(await names(yard)).toEqual(['wide', 'own']);
      expect(await names(null)).toEqual(['wide']);
      expect(await names(uuid())).toEqual(['wide']);
      expect(await suite.asOwner(other.id, (stores) => stores.policies.listApplicable(user.id, yard))).toEqual([]);
    });
  });
}
