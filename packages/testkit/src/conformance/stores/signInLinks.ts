import type { SignInLink } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, uuid } from './fixtures.js';
import { rejectionOf, useStoreSuite, type OpenStoreHarness } from './harness.js';

function newLink(overrides: Partial<SignInLink> = {}): SignInLink {
  return {
    token_hash: uuid().replaceAll('-', ''),
    email: 'invitee@example.com',
    name: 'Invitee',
    created_at: at(0),
    expires_at: at(3600),
    used_at: null,
    ...overrides,
  };
}

/** One-time sign-in links (`trellis-server users invite`). */
export function describeSignInLinkStoreConformance(open: OpenStoreHarness): void {
  describe('SignInLinkStore', () => {
    const suite = useStoreSuite(open);

    it('spends a link once, and never an expired or unknown one', async () => {
      const link = newLink();
      const expired = newLink({ expires_at: at(10) });
      await suite.asSystem(async (stores) => {
        await stores.signInLinks.create(link);
        await stores.signInLinks.create(expired);
      });
      expect(await suite.asSystem((stores) => stores.signInLinks.consume(link.token_hash, at(60)))).toEqual({
        ...link,
        used_at: at(60),
      });
      expect(await suite.asSystem((stores) => stores.signInLinks.consume(link.token_hash, at(61)))).toBeNull();
      expect(await suite.asSystem((stores) => stores.signInLinks.consume(expired.token_hash, at(10)))).toBeNull();
      expect(await suite.asSystem((stores) => stores.signInLinks.consume('nothing', at(0)))).toBeNull();
    });

    it('lets one of two simultaneous redemptions through', async () => {
      const link = newLink();
      await suite.asSystem((stores) => stores.signInLinks.create(link));
      const results = await Promise.all([
        suite.asSystem((stores) => stores.signInLinks.consume(link.token_hash, at(5))),
        suite.asSystem((stores) => stores.signInLinks.consume(link.token_hash, at(5))),
      ]);
      expect(results.filter((result) => result !== null)).toHaveLength(1);
    });

    it('deletes links that expired, used or not', async () => {
      await suite.asSystem(async (stores) => {
        await stores.signInLinks.create(newLink({ expires_at: at(10) }));
        await stores.signInLinks.create(newLink({ expires_at: at(20), used_at: at(5) }));
        await stores.signInLinks.create(newLink({ expires_at: at(100) }));
      });
      expect(await suite.asSystem((stores) => stores.signInLinks.deleteExpired(at(50)))).toBe(2);
      expect(await suite.asSystem((stores) => stores.signInLinks.deleteExpired(at(50)))).toBe(0);
    });

    it('belongs to system work only', async () => {
      const owner = await suite.seedOwner();
      expect(
        await rejectionOf(suite.asOwner(owner.id, (stores) => stores.signInLinks.create(newLink()))),
      ).toBeInstanceOf(Error);
    });
  });
}
