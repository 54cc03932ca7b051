/**
 * Token refresh through the real binary and server: an expired access token is refreshed
 * silently, a rejected one after the 401, concurrent processes share one refresh, and a dead
 * refresh token means "run trellis login".
 */
import { writeFileSync } from 'node:fs';
import { TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, runTrellis, signJwt, TempHome, TestServer } from './harness.js';

let server: TestServer;
const homes: TempHome[] = [];

beforeAll(async () => {
  server = await new TestServer().start();
});
afterAll(async () => {
  await server?.destroy();
  for (const home of homes) home.remove();
});

async function loggedInHome(): Promise<TempHome> {
  const home = new TempHome();
  homes.push(home);
  await login(server, home);
  return home;
}

/** Replaces the saved access token with one that expired a minute ago (correctly signed). */
function expireAccessToken(home: TempHome): string {
  const saved = home.readAuth();
  const claims = JSON.parse(Buffer.from(saved.access_token.split('.')[1] as string, 'base64url').toString());
  const expired = signJwt({ ...claims, iat: claims.exp - 7200, exp: Math.floor(Date.now() / 1000) - 60 });
  writeFileSync(
    home.authPath,
    JSON.stringify({
      ...saved,
      access_token: expired,
      access_token_expires_at: new Date(Date.now() - 60_000).toISOString(),
    }),
    { mode: 0o600 },
  );
  return expired;
}

describe('token refresh', () => {
  it('refreshes an expired access token silently and rotates both tokens', async () => {
    const home = await loggedInHome();
    const before = home.readAuth();
    const expired = expireAccessToken(home);
    // The server itself refuses the expired token, so only a refresh can make this work.
    await expect(
      new TrellisClient({ baseUrl: server.url, auth: { kind: 'bearer', accessToken: () => expired } }).whoami(),
    ).rejects.toMatchObject({ status: 401 });

    const result = await runTrellis(['whoami', '--json'], { env: home.env() });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout).email).toBe('admin@localhost');
    const after = home.readAuth();
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(after.access_token).not.toBe(expired);
    expect(Date.parse(after.access_token_expires_at)).toBeGreaterThan(Date.now() + 50 * 60_000);
  });

  it('refreshes after a 401 for a token that looks valid but is not', async () => {
    const home = await loggedInHome();
    const saved = home.readAuth();
    const forged = signJwt(
      { sub: 'x', type: 'access', exp: Math.floor(Date.now() / 1000) + 3600 },
      'a-different-secret-of-enough-length!!',
    );
    writeFileSync(home.authPath, JSON.stringify({ ...saved, access_token: forged }), { mode: 0o600 });
    const result = await runTrellis(['vineyards', 'list', '--json'], { env: home.env() });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([]);
    expect(home.readAuth().refresh_token).not.toBe(saved.refresh_token);
  });

  it('lets concurrent processes refresh without tripping reuse detection', async () => {
    const home = await loggedInHome();
    const before = home.readAuth();
    expireAccessToken(home);
    const results = await Promise.all([1, 2, 3, 4].map(() => runTrellis(['whoami', '--json'], { env: home.env() })));
    for (const result of results) {
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    }
    // One rotation happened and the login is still alive: a reused refresh token would have
    // revoked the whole family, and this forced refresh would then fail.
    const after = home.readAuth();
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expireAccessToken(home);
    const later = await runTrellis(['whoami'], { env: home.env() });
    expect(later.code).toBe(0);
  });

  it('says "run trellis login" and exits 3 when the refresh token was revoked', async () => {
    const home = await loggedInHome();
    await new TrellisClient({ baseUrl: server.url }).logout(home.readAuth().refresh_token);
    expireAccessToken(home);
    const result = await runTrellis(['vineyards', 'list'], { env: home.env() });
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      new RegExp(`^Error: your login to ${server.url} has expired or was revoked \\(.+\\); run \`trellis login\`\\n$`),
    );
  });

  it('accepts an access token from TRELLIS_TOKEN for CI, without touching the saved login', async () => {
    const home = await loggedInHome();
    const { access_token } = home.readAuth();
    const ci = new TempHome();
    homes.push(ci);
    const result = await runTrellis(['whoami', '--json'], {
      env: ci.env({ TRELLIS_TOKEN: access_token, TRELLIS_SERVER: server.url }),
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).email).toBe('admin@localhost');
    expect(() => ci.readAuth()).toThrow();
  });
});
