import { describe, expect, it } from 'vitest';
import { at, newCloudIdentity, newUser, newVineyard, uuid } from './fixtures.js';
import { expectConflict, type OpenStoreHarness, useStoreSuite } from './harness.js';

export function describeVineyardStoreConformance(open: OpenStoreHarness): void {
  describe('VineyardStore', () => {
    const suite = useStoreSuite(open);

    it('creates a vineyard and reads it back, every field intact', async () => {
      const owner = await suite.asSystem((stores) => stores.users.create(newUser()));
      const vineyard = newVineyard(owner.id, { name: 'prod.eu_west-1' });
      expect(await suite.asOwner(owner.id, (stores) => stores.vineyards.create(vineyard))).toEqual(vineyard);
      expect(await suite.asOwner(owner.id, (stores) => stores.vineyards.get(owner.id, vineyard.id))).toEqual(vineyard);
      expect(await suite.asOwner(owner.id, (stores) => stores.vineyards.get(owner.id, uuid()))).toBeNull();
    });

    it('lists oldest first, by creation time and then by insertion when times are equal', async () => {
      const owner = await suite.asSystem((stores) => stores.users.create(newUser()));
      const vineyards = [
        newVineyard(owner.id, { name: 'c', created_at: at(30) }),
        newVineyard(owner.id, { name: 'a', created_at: at(10) }),
        newVineyard(owner.id, { name: 'b1', created_at: at(20) }),
        newVineyard(owner.id, { name: 'b2', created_at: at(20) }),
      ];
      await suite.asOwner(owner.id, async (stores) => {
        for (const vineyard of vineyards) await stores.vineyards.create(vineyard);
      });
      const listed = await suite.asOwner(owner.id, (stores) => stores.vineyards.list(owner.id));
      expect(listed.map((vineyard) => vineyard.name)).toEqual(['a', 'b1', 'b2', 'c']);
    });

    it('refuses a second vineyard of the same name for one owner (vineyard_name_taken), not for another', async () => {
      const [a, b] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const first = await suite.asOwner(a.id, (stores) => stores.vineyards.create(newVineyard(a.id, { name: 'prod' })));
      const duplicate = newVineyard(a.id, { name: 'prod' });
      await expectConflict(
        suite.asOwner(a.id, (stores) => stores.vineyards.create(duplicate)),
        'vineyard_name_taken',
      );
      expect(await suite.asOwner(a.id, (stores) => stores.vineyards.list(a.id))).toEqual([first]);
      const theirs = newVineyard(b.id, { name: 'prod' });
      expect(await suite.asOwner(b.id, (stores) => stores.vineyards.create(theirs))).toEqual(theirs);
    });

    it("never shows one owner's vineyards to another", async () => {
      const [a, b] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const vineyard = await suite.asOwner(a.id, (stores) => stores.vineyards.create(newVineyard(a.id)));
      expect(await suite.asOwner(b.id, (stores) => stores.vineyards.get(b.id, vineyard.id))).toBeNull();
      expect(await suite.asOwner(b.id, (stores) => stores.vineyards.list(b.id))).toEqual([]);
    });
  });

  describe('CloudIdentityStore', () => {
    const suite = useStoreSuite(open);

    it('creates an identity and reads it back for its owner only', async () => {
      const [a, b] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const identity = newCloudIdentity(a.id);
      expect(await suite.asOwner(a.id, (stores) => stores.cloudIdentities.create(identity))).toEqual(identity);
      expect(await suite.asOwner(a.id, (stores) => stores.cloudIdentities.get(a.id, identity.id))).toEqual(identity);
      expect(await suite.asOwner(a.id, (stores) => stores.cloudIdentities.get(a.id, uuid()))).toBeNull();
      expect(await suite.asOwner(b.id, (stores) => stores.cloudIdentities.get(b.id, identity.id))).toBeNull();
    });
  });
}
