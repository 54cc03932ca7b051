import { describe, expect, it } from 'vitest';
import { newUser, uuid } from './fixtures.js';
import { expectConflict, type OpenStoreHarness, useStoreSuite } from './harness.js';

export function describeUserStoreConformance(open: OpenStoreHarness): void {
  describe('UserStore', () => {
    const suite = useStoreSuite(open);

    it('creates a user and reads it back by id and by email, every field intact', async () => {
      const user = newUser({ name: 'Ada Lovelace ✓' });
      const created = await suite.asSystem((stores) => stores.users.create(user));
      expect(created).toEqual(user);
      expect(await suite.asSystem((stores) => stores.users.get(user.id))).toEqual(user);
      expect(await suite.asSystem((stores) => stores.users.findByEmail(user.email))).toEqual(user);
      expect(await suite.asOwner(user.id, (stores) => stores.users.get(user.id))).toEqual(user);
    });

    it('answers null for an unknown id or email', async () => {
      await suite.asSystem((stores) => stores.users.create(newUser()));
      expect(await suite.asSystem((stores) => stores.users.get(uuid()))).toBeNull();
      expect(await suite.asSystem((stores) => stores.users.findByEmail('nobody@example.test'))).toBeNull();
    });

    it('refuses a second user with the same email (email_taken) and keeps only the first', async () => {
      const first = await suite.asSystem((stores) => stores.users.create(newUser()));
      const second = newUser({ email: first.email });
      await expectConflict(
        suite.asSystem((stores) => stores.users.create(second)),
        'email_taken',
      );
      expect(await suite.asSystem((stores) => stores.users.get(second.id))).toBeNull();
      expect(await suite.asSystem((stores) => stores.users.findByEmail(first.email))).toEqual(first);
    });

    it('does not show one user to another', async () => {
      const a = await suite.asSystem((stores) => stores.users.create(newUser()));
      const b = await suite.asSystem((stores) => stores.users.create(newUser()));
      expect(await suite.asOwner(b.id, (stores) => stores.users.get(a.id))).toBeNull();
    });
  });

  describe('IdentityStore', () => {
    const suite = useStoreSuite(open);

    it('creates a link, finds it by provider id and lists it for its user', async () => {
      const user = await suite.asSystem((stores) => stores.users.create(newUser()));
      const identity = {
        user_id: user.id,
        provider: 'github' as const,
        provider_user_id: '4242',
        provider_token: 'enc:v1:abc==',
        scopes: 'read:user repo',
      };
      expect(await suite.asSystem((stores) => stores.identities.upsert(identity))).toEqual(identity);
      expect(await suite.asSystem((stores) => stores.identities.find('github', '4242'))).toEqual(identity);
      expect(await suite.asSystem((stores) => stores.identities.find('gitlab', '4242'))).toBeNull();
      expect(await suite.asSystem((stores) => stores.identities.listForUser(user.id))).toEqual([identity]);
    });

    it('refreshes token and scopes of an existing link but keeps the user it was made for', async () => {
      const [owner, other] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const first = {
        user_id: owner.id,
        provider: 'google' as const,
        provider_user_id: 'g-1',
        provider_token: 't1',
        scopes: 'a',
      };
      await suite.asSystem((stores) => stores.identities.upsert(first));
      const refreshed = await suite.asSystem((stores) =>
        stores.identities.upsert({ ...first, user_id: other.id, provider_token: null, scopes: 'a b' }),
      );
      const expected = { ...first, provider_token: null, scopes: 'a b' };
      expect(refreshed).toEqual(expected);
      expect(await suite.asSystem((stores) => stores.identities.find('google', 'g-1'))).toEqual(expected);
      expect(await suite.asSystem((stores) => stores.identities.listForUser(other.id))).toEqual([]);
    });

    it("lists only the user's own links", async () => {
      const [a, b] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const links = [
        { user_id: a.id, provider: 'github' as const, provider_user_id: '1', provider_token: 'x', scopes: '' },
        { user_id: a.id, provider: 'gitlab' as const, provider_user_id: '1', provider_token: null, scopes: 'api' },
        { user_id: b.id, provider: 'bitbucket' as const, provider_user_id: '2', provider_token: 'y', scopes: '' },
      ];
      await suite.asSystem(async (stores) => {
        for (const link of links) await stores.identities.upsert(link);
      });
      const listed = await suite.asSystem((stores) => stores.identities.listForUser(a.id));
      expect(listed).toHaveLength(2);
      expect(listed).toEqual(expect.arrayContaining([links[0], links[1]]));
      expect(await suite.asOwner(b.id, (stores) => stores.identities.listForUser(a.id))).toEqual([]);
    });
  });
}
