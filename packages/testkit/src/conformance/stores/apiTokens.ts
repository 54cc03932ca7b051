import { ConflictError } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, newApiToken, newUser, uuid } from './fixtures.js';
import { type OpenStoreHarness, rejectionOf, useStoreSuite } from './harness.js';

export function describeApiTokenStoreConformance(open: OpenStoreHarness): void {
  describe('ApiTokenStore', () => {
    const suite = useStoreSuite(open);
    const newOwner = () => suite.asSystem((stores) => stores.users.create(newUser()));

    it('creates personal and organization tokens and reads them back, by hash for system work only', async () => {
      const user = await newOwner();
      const orgId = uuid();
      const personal = newApiToken(user.id, { expires_at: at(900.5), name: 'ci deploy' });
      const org = newApiToken(user.id, { org_id: orgId, role: 'operator' });
      expect(await suite.asOwner(user.id, (stores) => stores.apiTokens.create(personal))).toEqual(personal);
      expect(await suite.asOwner(orgId, (stores) => stores.apiTokens.create(org))).toEqual(org);

      expect(await suite.asSystem((stores) => stores.apiTokens.findByHash(personal.token_hash))).toEqual(personal);
      expect(await suite.asSystem((stores) => stores.apiTokens.findByHash(org.token_hash))).toEqual(org);
      expect(await suite.asSystem((stores) => stores.apiTokens.findByHash('0'.repeat(64)))).toBeNull();
      expect(await suite.asOwner(user.id, (stores) => stores.apiTokens.find(personal.id))).toEqual(personal);
      expect(await suite.asOwner(orgId, (stores) => stores.apiTokens.find(org.id))).toEqual(org);
      // Each owner sees only its own: the organization's token is not the creator's row.
      expect(await suite.asOwner(user.id, (stores) => stores.apiTokens.find(org.id))).toBeNull();
      expect(await suite.asOwner(orgId, (stores) => stores.apiTokens.find(personal.id))).toBeNull();
      expect(await suite.asOwner(user.id, (stores) => stores.apiTokens.findByHash(org.token_hash))).toBeNull();
    });

    it('reads a token by hash with its creator, in system work only', async () => {
      const user = await newOwner();
      const orgId = uuid();
      const personal = newApiToken(user.id);
      const org = newApiToken(user.id, { org_id: orgId, role: 'viewer' });
      await suite.asOwner(user.id, (stores) => stores.apiTokens.create(personal));
      await suite.asOwner(orgId, (stores) => stores.apiTokens.create(org));
      for (const token of [personal, org]) {
        expect(await suite.asSystem((stores) => stores.apiTokens.findByHashWithCreator(token.token_hash))).toEqual({
          token,
          creator: user,
        });
      }
      expect(await suite.asSystem((stores) => stores.apiTokens.findByHashWithCreator('0'.repeat(64)))).toBeNull();
      expect(
        await suite.asOwner(user.id, (stores) => stores.apiTokens.findByHashWithCreator(org.token_hash)),
      ).toBeNull();
    });

    it('refuses a second token with the same hash', async () => {
      const user = await newOwner();
      const first = await suite.asOwner(user.id, (stores) => stores.apiTokens.create(newApiToken(user.id)));
      const error = await rejectionOf(
        suite.asOwner(user.id, (stores) =>
          stores.apiTokens.create(newApiToken(user.id, { token_hash: first.token_hash })),
        ),
      );
      expect(error).toBeInstanceOf(ConflictError);
    });

    it("pages an owner's tokens newest first, without revoked ones or other owners'", async () => {
      const user = await newOwner();
      const other = await newOwner();
      const tokens = [
        newApiToken(user.id, { created_at: at(1) }),
        newApiToken(user.id, { created_at: at(3) }),
        newApiToken(user.id, { created_at: at(2), revoked_at: at(4) }),
        newApiToken(user.id, { created_at: at(3) }),
      ];
      await suite.asOwner(user.id, async (stores) => {
        for (const token of tokens) await stores.apiTokens.create(token);
      });
      await suite.asOwner(other.id, (stores) => stores.apiTokens.create(newApiToken(other.id)));
      const first = await suite.asOwner(user.id, (stores) => stores.apiTokens.page(user.id, { limit: 2 }));
      expect(first.items).toEqual([tokens[3], tokens[1]]);
      expect(first.next).not.toBeNull();
      const rest = await suite.asOwner(user.id, (stores) =>
        stores.apiTokens.page(user.id, { limit: 2, after: first.next ?? undefined }),
      );
      expect(rest).toEqual({ items: [tokens[0]], next: null });
      expect(await suite.asOwner(other.id, (stores) => stores.apiTokens.page(user.id, { limit: 10 }))).toEqual({
        items: [],
        next: null,
      });
    });

    it('revokes once; another owner cannot', async () => {
      const user = await newOwner();
      const other = await newOwner();
      const token = await suite.asOwner(user.id, (stores) => stores.apiTokens.create(newApiToken(user.id)));
      expect(await suite.asOwner(other.id, (stores) => stores.apiTokens.revoke(user.id, token.id, at(5)))).toBe(false);
      expect(await suite.asOwner(user.id, (stores) => stores.apiTokens.find(token.id))).toEqual(token);
      expect(await suite.asOwner(user.id, (stores) => stores.apiTokens.revoke(user.id, token.id, at(5)))).toBe(true);
      expect(await suite.asOwner(user.id, (stores) => stores.apiTokens.revoke(user.id, token.id, at(6)))).toBe(false);
      expect(await suite.asOwner(user.id, (stores) => stores.apiTokens.find(token.id))).toEqual({
        ...token,
        revoked_at: at(5),
      });
    });

    it('records a use at most once per interval', async () => {
      const user = await newOwner();
      const token = await suite.asOwner(user.id, (stores) => stores.apiTokens.create(newApiToken(user.id)));
      const use = (when: number, notBefore: number) =>
        suite.asSystem((stores) => stores.apiTokens.recordUse(token.id, at(when), at(notBefore)));
      expect(await use(100, 40)).toBe(true);
      // Within the interval: the first use stands.
      expect(await use(130, 70)).toBe(false);
      expect((await suite.asSystem((stores) => stores.apiTokens.find(token.id)))?.last_used_at).toBe(at(100));
      expect(await use(170.25, 110)).toBe(true);
      expect((await suite.asSystem((stores) => stores.apiTokens.find(token.id)))?.last_used_at).toBe(at(170.25));
      expect(await suite.asSystem((stores) => stores.apiTokens.recordUse(uuid(), at(200), at(140)))).toBe(false);
    });
  });
}
