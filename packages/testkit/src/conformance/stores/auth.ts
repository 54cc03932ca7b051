import { describe, expect, it } from 'vitest';
import { later, newCliLogin, newRefreshToken, newUser, uuid } from './fixtures.js';
import { expectConflict, type OpenStoreHarness, useStoreSuite } from './harness.js';

export function describeAuthStoreConformance(open: OpenStoreHarness): void {
  describe('CliLoginStore', () => {
    const suite = useStoreSuite(open);

    it('creates a login and reads it back for update, every field intact', async () => {
      const user = await suite.asSystem((stores) => stores.users.create(newUser()));
      const login = newCliLogin(user.id, { verification_code: 'ZXCVBN' });
      expect(await suite.asOwner(user.id, (stores) => stores.cliLogins.create(login))).toEqual(login);
      expect(await suite.asSystem((stores) => stores.cliLogins.findForUpdate(login.device_code))).toEqual(login);
      expect(await suite.asSystem((stores) => stores.cliLogins.findForUpdate(uuid()))).toBeNull();
    });

    it('keeps the provider the approving session signed in with', async () => {
      const user = await suite.asSystem((stores) => stores.users.create(newUser()));
      const viaGitLab = newCliLogin(user.id, { provider: 'gitlab' });
      const viaBootstrap = newCliLogin(user.id, { provider: null });
      await suite.asOwner(user.id, async (stores) => {
        await stores.cliLogins.create(viaGitLab);
        await stores.cliLogins.create(viaBootstrap);
      });
      expect(await suite.asSystem((stores) => stores.cliLogins.findForUpdate(viaGitLab.device_code))).toEqual(
        viaGitLab,
      );
      expect(
        (await suite.asSystem((stores) => stores.cliLogins.findForUpdate(viaBootstrap.device_code)))?.provider,
      ).toBeNull();
    });

    it('keeps a login that nobody approved yet (no profile)', async () => {
      const login = newCliLogin(null);
      await suite.asSystem((stores) => stores.cliLogins.create(login));
      expect(await suite.asSystem((stores) => stores.cliLogins.findForUpdate(login.device_code))).toEqual(login);
    });

    it('refuses a second login for a device code (device_code_used)', async () => {
      const user = await suite.asSystem((stores) => stores.users.create(newUser()));
      const login = newCliLogin(user.id);
      await suite.asOwner(user.id, (stores) => stores.cliLogins.create(login));
      await expectConflict(
        suite.asOwner(user.id, (stores) =>
          stores.cliLogins.create(
            newCliLogin(user.id, { device_code: login.device_code, verification_code: 'QQQQQQ' }),
          ),
        ),
        'device_code_used',
      );
      expect(await suite.asSystem((stores) => stores.cliLogins.findForUpdate(login.device_code))).toEqual(login);
    });

    it('counts failed attempts one by one and returns the new count', async () => {
      const login = newCliLogin(null);
      await suite.asSystem((stores) => stores.cliLogins.create(login));
      const counts: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        counts.push(await suite.asSystem((stores) => stores.cliLogins.recordFailedAttempt(login.device_code)));
      }
      expect(counts).toEqual([1, 2, 3]);
      const concurrent = await Promise.all(
        [0, 1].map(() => suite.asSystem((stores) => stores.cliLogins.recordFailedAttempt(login.device_code))),
      );
      expect(concurrent.sort()).toEqual([4, 5]);
      expect((await suite.asSystem((stores) => stores.cliLogins.findForUpdate(login.device_code)))?.attempts).toBe(5);
    });

    it('consumes a login once: true, then false, and records when', async () => {
      const login = newCliLogin(null);
      await suite.asSystem((stores) => stores.cliLogins.create(login));
      const when = later();
      expect(await suite.asSystem((stores) => stores.cliLogins.consume(login.device_code, when))).toBe(true);
      expect(await suite.asSystem((stores) => stores.cliLogins.consume(login.device_code, later()))).toBe(false);
      const stored = await suite.asSystem((stores) => stores.cliLogins.findForUpdate(login.device_code));
      expect(stored).toEqual({ ...login, consumed_at: when });
    });
  });

  describe('RefreshTokenStore', () => {
    const suite = useStoreSuite(open);

    it('creates a token record and reads it back, every field intact', async () => {
      const user = await suite.asSystem((stores) => stores.users.create(newUser()));
      const token = newRefreshToken(user.id);
      expect(await suite.asSystem((stores) => stores.refreshTokens.create(token))).toEqual(token);
      expect(await suite.asSystem((stores) => stores.refreshTokens.get(token.id))).toEqual(token);
      expect(await suite.asSystem((stores) => stores.refreshTokens.get(uuid()))).toBeNull();
    });

    it('marks a token rotated once: true, then false (a reuse), keeping the first time', async () => {
      const user = await suite.asSystem((stores) => stores.users.create(newUser()));
      const token = newRefreshToken(user.id);
      await suite.asSystem((stores) => stores.refreshTokens.create(token));
      const when = later();
      expect(await suite.asSystem((stores) => stores.refreshTokens.markRotated(token.id, when))).toBe(true);
      expect(await suite.asSystem((stores) => stores.refreshTokens.markRotated(token.id, later()))).toBe(false);
      expect(await suite.asSystem((stores) => stores.refreshTokens.get(token.id))).toEqual({
        ...token,
        rotated_at: when,
      });
    });

    it('lets exactly one of two concurrent rotations win', async () => {
      const user = await suite.asSystem((stores) => stores.users.create(newUser()));
      const token = newRefreshToken(user.id);
      await suite.asSystem((stores) => stores.refreshTokens.create(token));
      const results = await Promise.all(
        [0, 1].map(() => suite.asSystem((stores) => stores.refreshTokens.markRotated(token.id, later()))),
      );
      expect(results.sort()).toEqual([false, true]);
    });

    it('revokes every unrevoked token of a family, and nothing of other families', async () => {
      const user = await suite.asSystem((stores) => stores.users.create(newUser()));
      const family = uuid();
      const earlier = later();
      const tokens = [
        newRefreshToken(user.id, { family_id: family, rotated_at: later() }),
        newRefreshToken(user.id, { family_id: family }),
        newRefreshToken(user.id, { family_id: family, revoked_at: earlier }),
        newRefreshToken(user.id),
      ];
      await suite.asSystem(async (stores) => {
        for (const token of tokens) await stores.refreshTokens.create(token);
      });
      const when = later();
      await suite.asSystem((stores) => stores.refreshTokens.revokeFamily(family, when));
      const after = await suite.asSystem((stores) => Promise.all(tokens.map((t) => stores.refreshTokens.get(t.id))));
      expect(after).toEqual([
        { ...tokens[0], revoked_at: when },
        { ...tokens[1], revoked_at: when },
        tokens[2],
        tokens[3],
      ]);
    });
  });
}
