import { randomUUID } from 'node:crypto';
import { ConflictError, identityTokenContext, systemScope, UnauthorizedError, ValidationError } from '@trellis/core';
import { createTestCore, seedUser, type TestCore, type TestUser } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from './helpers.js';

let core: TestCore;
let ada: TestUser;
let deviceCode: string;

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core, { email: 'ada@example.test' });
  deviceCode = randomUUID();
});

const exchange = (verification_code: unknown, device_code: unknown = deviceCode) =>
  core.useCases.auth.exchangeCliLogin({ device_code, verification_code });
const stored = () => core.uow.snapshot().cliLogins.get(deviceCode)!;
/** A code of the alphabet that is not `code`. */
const wrongFor = (code: string) => (code === 'BBBBBB' ? 'CCCCCC' : 'BBBBBB');

describe('generating a CLI login', () => {
  it('records the device code, the approving user and a 6-character code valid 10 minutes', async () => {
    const { verification_code, expires_at } = await core.useCases.auth.generateCliLogin(ada, deviceCode);
    expect(verification_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{6}$/);
    expect(expires_at).toBe(new Date(core.clock.now().getTime() + 10 * 60 * 1000).toISOString());
    expect(stored()).toEqual({
      device_code: deviceCode,
      verification_code,
      profile_id: ada.userId,
      provider: null,
      created_at: core.clock.now().toISOString(),
      expires_at,
      attempts: 0,
      consumed_at: null,
    });
  });

  it('409s a device code that already has a login, whoever asks', async () => {
    const first = await core.useCases.auth.generateCliLogin(ada, deviceCode);
    await expectFailure(core.useCases.auth.generateCliLogin(ada, deviceCode), ConflictError, 'device_code_used');
    const bob = await seedUser(core);
    await expectFailure(core.useCases.auth.generateCliLogin(bob, deviceCode), ConflictError, 'device_code_used');
    expect(stored()).toMatchObject({ profile_id: ada.userId, verification_code: first.verification_code });
  });

  it('400s a device code that is not a UUID', async () => {
    await expectFailure(core.useCases.auth.generateCliLogin(ada, 'abc'), ValidationError);
  });
});

describe('exchanging a CLI login', () => {
  it('trades the right code, in any case and with spaces, for tokens and the user email', async () => {
    const { verification_code } = await core.useCases.auth.generateCliLogin(ada, deviceCode);
    const result = await exchange(`  ${verification_code.toLowerCase()} `);
    expect(result).toEqual({
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      provider_token: null,
      user_email: 'ada@example.test',
    });
    expect(core.useCases.auth.authenticateAccessToken(result.access_token)).toEqual({
      userId: ada.userId,
      email: 'ada@example.test',
    });
    const refresh = core.signer.verify(result.refresh_token, 'refresh');
    expect(refresh).toMatchObject({ sub: ada.userId, type: 'refresh' });
    expect(core.uow.snapshot().refreshTokens.get(refresh.jti!)).toMatchObject({
      user_id: ada.userId,
      family_id: refresh.fam,
      rotated_at: null,
      revoked_at: null,
      expires_at: new Date(refresh.exp * 1000).toISOString(),
    });
    expect(stored().consumed_at).toBe(core.clock.now().toISOString());
  });

  it('returns the provider token of the provider the approving session signed in with, decrypted', async () => {
    const link = async (provider: 'github' | 'gitlab', token: string) => {
      const sealed = await core.secrets.seal(token, identityTokenContext(provider, `${provider}-1`));
      await core.uow.run(systemScope, (stores) =>
        stores.identities.upsert({
          user_id: ada.userId,
          provider,
          provider_user_id: `${provider}-1`,
          provider_token: sealed,
          scopes: 'repo',
        }),
      );
    };
    await link('github', 'gho_token');
    await link('gitlab', 'glpat_token');
    const { verification_code } = await core.useCases.auth.generateCliLogin({ ...ada, provider: 'gitlab' }, deviceCode);
    expect(stored().provider).toBe('gitlab');
    expect((await exchange(verification_code)).provider_token).toBe('glpat_token');

    const viaGitHub = randomUUID();
    const second = await core.useCases.auth.generateCliLogin({ ...ada, provider: 'github' }, viaGitHub);
    expect((await exchange(second.verification_code, viaGitHub)).provider_token).toBe('gho_token');
  });

  it('returns no provider token for a login approved without a provider (the bootstrap admin)', async () => {
    await core.uow.run(systemScope, (stores) =>
      stores.identities.upsert({
        user_id: ada.userId,
        provider: 'github',
        provider_user_id: '1',
        provider_token: 'sealed',
        scopes: 'repo',
      }),
    );
    const { verification_code } = await core.useCases.auth.generateCliLogin({ ...ada, provider: null }, deviceCode);
    expect((await exchange(verification_code)).provider_token).toBeNull();
  });

  it('returns no provider token when the stored one no longer opens (the key changed), but still logs in', async () => {
    await core.uow.run(systemScope, (stores) =>
      stores.identities.upsert({
        user_id: ada.userId,
        provider: 'github',
        provider_user_id: '1',
        provider_token: 'v1.unknownk.aaaa.bbbb.cccc',
        scopes: 'repo',
      }),
    );
    const { verification_code } = await core.useCases.auth.generateCliLogin({ ...ada, provider: 'github' }, deviceCode);
    const result = await exchange(verification_code);
    expect(result.provider_token).toBeNull();
    expect(result.user_email).toBe('ada@example.test');
  });

  it('answers authorization_pending for a device code the browser has not approved', async () => {
    await expectFailure(exchange('BCDFGH'), ValidationError, 'authorization_pending');
    expect(core.uow.snapshot().cliLogins.size).toBe(0);
  });

  it('counts a wrong code against the login, committed although the call fails', async () => {
    const { verification_code } = await core.useCases.auth.generateCliLogin(ada, deviceCode);
    const error = await expectFailure(exchange(wrongFor(verification_code)), ValidationError, 'invalid_grant');
    expect(error.message).toContain('4 attempts left');
    expect(stored().attempts).toBe(1);
    await expectFailure(exchange('x'), ValidationError, 'invalid_grant');
    expect(stored().attempts).toBe(2);
    await expect(exchange(verification_code)).resolves.toMatchObject({ user_email: 'ada@example.test' });
  });

  it('says "1 attempt left" (singular) before the last attempt, and accepts the code typed with a space', async () => {
    const { verification_code } = await core.useCases.auth.generateCliLogin(ada, deviceCode);
    for (let i = 0; i < 3; i++)
      await expectFailure(exchange(wrongFor(verification_code)), ValidationError, 'invalid_grant');
    const error = await expectFailure(exchange(wrongFor(verification_code)), ValidationError, 'invalid_grant');
    expect(error.message).toBe('wrong verification code (1 attempt left)');
    const spaced = `${verification_code.slice(0, 3)} ${verification_code.slice(3).toLowerCase()}`;
    await expect(exchange(spaced)).resolves.toMatchObject({ user_email: 'ada@example.test' });
  });

  it('kills the login after 5 wrong codes, even for the right code afterwards', async () => {
    const { verification_code } = await core.useCases.auth.generateCliLogin(ada, deviceCode);
    for (let i = 0; i < 5; i++)
      await expectFailure(exchange(wrongFor(verification_code)), ValidationError, 'invalid_grant');
    expect(stored().attempts).toBe(5);
    await expectFailure(exchange(verification_code), ValidationError, 'invalid_grant');
    expect(stored().attempts).toBe(5);
    expect(stored().consumed_at).toBeNull();
    expect(core.uow.snapshot().refreshTokens.size).toBe(0);
  });

  it('still accepts the right code after 4 wrong ones', async () => {
    const { verification_code } = await core.useCases.auth.generateCliLogin(ada, deviceCode);
    for (let i = 0; i < 4; i++) await expectFailure(exchange(wrongFor(verification_code)), ValidationError);
    await expect(exchange(verification_code)).resolves.toBeTruthy();
  });

  it('answers expired_token once 10 minutes have passed, without counting an attempt', async () => {
    const { verification_code } = await core.useCases.auth.generateCliLogin(ada, deviceCode);
    core.clock.advance({ minutes: 10 });
    await expectFailure(exchange(verification_code), ValidationError, 'expired_token');
    await expectFailure(exchange(wrongFor(verification_code)), ValidationError, 'expired_token');
    expect(stored()).toMatchObject({ consumed_at: null, attempts: 0 });
  });

  it('compares times as instants, not as text: an expiry stored without milliseconds still ends the login', async () => {
    // A store may hand back any ISO-8601 UTC form; "…:00Z" sorts after "…:00.500Z" as text.
    const { verification_code } = await core.useCases.auth.generateCliLogin(ada, deviceCode);
    await core.uow.modify((state) => {
      state.cliLogins.get(deviceCode)!.expires_at = '2026-01-01T00:10:00Z';
    });
    core.clock.set('2026-01-01T00:10:00.500Z');
    await expectFailure(exchange(verification_code), ValidationError, 'expired_token');
  });

  it('accepts the code just before it expires', async () => {
    const { verification_code } = await core.useCases.auth.generateCliLogin(ada, deviceCode);
    core.clock.advance({ minutes: 9, seconds: 59 });
    await expect(exchange(verification_code)).resolves.toBeTruthy();
  });

  it('is single use: a second exchange is invalid_grant', async () => {
    const { verification_code } = await core.useCases.auth.generateCliLogin(ada, deviceCode);
    await exchange(verification_code);
    await expectFailure(exchange(verification_code), ValidationError, 'invalid_grant');
    expect(core.uow.snapshot().refreshTokens.size).toBe(1);
  });

  it('400s a missing code or a malformed device code', async () => {
    await core.useCases.auth.generateCliLogin(ada, deviceCode);
    await expectFailure(exchange(undefined), ValidationError, 'validation_failed');
    await expectFailure(exchange('   '), ValidationError, 'validation_failed');
    await expectFailure(exchange('BCDFGH', 'nope'), ValidationError, 'validation_failed');
    expect(stored().attempts).toBe(0);
  });
});

describe('CLI tokens', () => {
  async function login(): Promise<{ access_token: string; refresh_token: string }> {
    const code = randomUUID();
    const { verification_code } = await core.useCases.auth.generateCliLogin(ada, code);
    return core.useCases.auth.exchangeCliLogin({ device_code: code, verification_code });
  }

  it('refresh rotates both tokens', async () => {
    const first = await login();
    core.clock.advance({ seconds: 1 });
    const second = await core.useCases.auth.refresh(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(core.useCases.auth.authenticateAccessToken(second.access_token).userId).toBe(ada.userId);
    const oldClaims = core.signer.verify(first.refresh_token, 'refresh');
    const newClaims = core.signer.verify(second.refresh_token, 'refresh');
    expect(newClaims.fam).toBe(oldClaims.fam);
    expect(newClaims.jti).not.toBe(oldClaims.jti);
    expect(core.uow.snapshot().refreshTokens.get(oldClaims.jti!)?.rotated_at).toBe(core.clock.now().toISOString());
    await expect(core.useCases.auth.refresh(second.refresh_token)).resolves.toBeTruthy();
  });

  it('a reused refresh token fails and revokes its whole family, so the newest one fails too', async () => {
    const first = await login();
    const second = await core.useCases.auth.refresh(first.refresh_token);
    const error = await expectFailure(
      core.useCases.auth.refresh(first.refresh_token),
      UnauthorizedError,
      'invalid_grant',
    );
    expect(error.message).toMatch(/already used/);
    const family = core.signer.verify(first.refresh_token, 'refresh').fam;
    const records = [...core.uow.snapshot().refreshTokens.values()].filter((r) => r.family_id === family);
    expect(records).toHaveLength(2);
    for (const record of records) expect(record.revoked_at).not.toBeNull();
    await expectFailure(core.useCases.auth.refresh(second.refresh_token), UnauthorizedError, 'invalid_grant');
  });

  it('revoking one login leaves another login of the same user working', async () => {
    const phone = await login();
    const laptop = await login();
    await core.useCases.auth.refresh(phone.refresh_token);
    await expectFailure(core.useCases.auth.refresh(phone.refresh_token), UnauthorizedError);
    await expect(core.useCases.auth.refresh(laptop.refresh_token)).resolves.toBeTruthy();
  });

  it('refuses an access token as a refresh token, and a refresh token as an access token', async () => {
    const tokens = await login();
    await expectFailure(core.useCases.auth.refresh(tokens.access_token), UnauthorizedError, 'invalid_token');
    expect(() => core.useCases.auth.authenticateAccessToken(tokens.refresh_token)).toThrow(UnauthorizedError);
    await expectFailure(core.useCases.auth.refresh(''), ValidationError);
    await expectFailure(core.useCases.auth.refresh(undefined), ValidationError);
    await expectFailure(core.useCases.auth.refresh('garbage'), UnauthorizedError);
  });

  it('access tokens expire after an hour; refresh tokens after 90 days', async () => {
    const tokens = await login();
    core.clock.advance({ minutes: 59, seconds: 59 });
    expect(core.useCases.auth.authenticateAccessToken(tokens.access_token).userId).toBe(ada.userId);
    core.clock.advance({ seconds: 1 });
    expect(() => core.useCases.auth.authenticateAccessToken(tokens.access_token)).toThrow(UnauthorizedError);
    core.clock.advance({ days: 90 });
    await expectFailure(core.useCases.auth.refresh(tokens.refresh_token), UnauthorizedError);
  });

  it('refuses a refresh token whose record is gone or expired although its signature is valid', async () => {
    const tokens = await login();
    const { jti } = core.signer.verify(tokens.refresh_token, 'refresh');
    await core.uow.modify((state) => {
      state.refreshTokens.get(jti!)!.expires_at = core.clock.now().toISOString();
    });
    await expectFailure(core.useCases.auth.refresh(tokens.refresh_token), UnauthorizedError, 'invalid_grant');
    await core.uow.modify((state) => {
      state.refreshTokens.delete(jti!);
    });
    await expectFailure(core.useCases.auth.refresh(tokens.refresh_token), UnauthorizedError, 'invalid_grant');
  });

  it('refuses a refresh token whose record expired, whatever ISO-8601 form the store returns', async () => {
    const tokens = await login();
    const { jti } = core.signer.verify(tokens.refresh_token, 'refresh');
    await core.uow.modify((state) => {
      state.refreshTokens.get(jti!)!.expires_at = '2026-01-01T00:00:00Z';
    });
    core.clock.advance(500);
    await expectFailure(core.useCases.auth.refresh(tokens.refresh_token), UnauthorizedError, 'invalid_grant');
  });

  it('revoke ends the login; it is idempotent', async () => {
    const tokens = await login();
    const next = await core.useCases.auth.refresh(tokens.refresh_token);
    await core.useCases.auth.revoke(next.refresh_token);
    await core.useCases.auth.revoke(next.refresh_token);
    await expectFailure(core.useCases.auth.refresh(next.refresh_token), UnauthorizedError, 'invalid_grant');
  });
});

describe('users', () => {
  it('ensureUser creates once per email, normalised', async () => {
    const user = await core.useCases.auth.ensureUser({ email: '  Grace@Example.TEST ', name: ' Grace ' });
    expect(user).toMatchObject({ email: 'grace@example.test', name: 'Grace' });
    expect((await core.useCases.auth.ensureUser({ email: 'grace@example.test' })).id).toBe(user.id);
    expect((await core.useCases.auth.ensureUser({ email: 'someone@example.test' })).name).toBe('someone@example.test');
    await expectFailure(core.useCases.auth.ensureUser({ email: 'not an email' }), ValidationError);
    expect(await core.useCases.auth.getUser(user.id)).toEqual(user);
  });
});
