/** Token refresh rules of the saved login, with a stand-in for the refresh endpoint. */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrellisApiError } from '@trellis/client';
import type { TokenPair } from '@trellis/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthFile, authFilePath, type StoredLogin } from '../src/auth/AuthFile.js';
import { LoginSession } from '../src/auth/LoginSession.js';
import { NotLoggedInError } from '../src/errors.js';
import { signJwt } from './harness.js';

let dir: string;
let file: AuthFile;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-session-'));
  file = new AuthFile(join(dir, 'trellis', 'auth.json'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function access(expiresInSeconds: number, n: number): string {
  return signJwt({ n, type: 'access', exp: Math.floor(Date.now() / 1000) + expiresInSeconds });
}

function login(expiresInSeconds: number): StoredLogin {
  return {
    server: 'http://trellis.test',
    user_email: 'a@example.com',
    access_token: access(expiresInSeconds, 0),
    access_token_expires_at: new Date(Date.now() + expiresInSeconds * 1000).toISOString(),
    refresh_token: 'refresh-0',
  };
}

/** A refresh endpoint that rotates, and refuses a refresh token it already rotated. */
function fakeRefresh() {
  let generation = 0;
  const used = new Set<string>();
  const calls: string[] = [];
  const rotate = async (refreshToken: string): Promise<TokenPair> => {
    calls.push(refreshToken);
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (used.has(refreshToken)) throw new TrellisApiError({ status: 401, code: 'invalid_grant', detail: 'reused' });
    used.add(refreshToken);
    generation += 1;
    return { access_token: access(3600, generation), refresh_token: `refresh-${generation}` };
  };
  return { rotate, calls };
}

describe('AuthFile', () => {
  it('lives under XDG_CONFIG_HOME, else ~/.config, and is written with mode 0600', () => {
    expect(authFilePath({ XDG_CONFIG_HOME: '/x/cfg', HOME: '/home/a' })).toBe('/x/cfg/trellis/auth.json');
    expect(authFilePath({ HOME: '/home/a' })).toBe('/home/a/.config/trellis/auth.json');
    expect(authFilePath({ XDG_CONFIG_HOME: 'relative', HOME: '/home/a' })).toBe('/home/a/.config/trellis/auth.json');
    file.write(login(3600));
    expect(statSync(file.path).mode & 0o777).toBe(0o600);
    expect(file.read()?.refresh_token).toBe('refresh-0');
  });
});

describe('LoginSession', () => {
  it('uses a fresh access token as it is', async () => {
    const saved = login(3600);
    file.write(saved);
    const { rotate, calls } = fakeRefresh();
    expect(await new LoginSession(file, saved, rotate).accessToken()).toBe(saved.access_token);
    expect(calls).toEqual([]);
  });

  it('refreshes an expiring token and saves both new tokens', async () => {
    const saved = login(30);
    file.write(saved);
    const { rotate, calls } = fakeRefresh();
    const token = await new LoginSession(file, saved, rotate).accessToken();
    expect(calls).toEqual(['refresh-0']);
    expect(token).not.toBe(saved.access_token);
    expect(file.read()).toMatchObject({ access_token: token, refresh_token: 'refresh-1' });
  });

  it('lets only one of several sessions refresh; the others adopt its tokens', async () => {
    const saved = login(-10);
    file.write(saved);
    const { rotate, calls } = fakeRefresh();
    const sessions = [1, 2, 3, 4].map(() => new LoginSession(file, saved, rotate));
    const tokens = await Promise.all(sessions.map((session) => session.accessToken()));
    expect(calls).toEqual(['refresh-0']);
    expect(new Set(tokens).size).toBe(1);
    expect(file.read()?.refresh_token).toBe('refresh-1');
  });

  it('refreshes after a 401 even when the token has not expired, once for racing callers', async () => {
    const saved = login(3600);
    file.write(saved);
    const { rotate, calls } = fakeRefresh();
    const first = new LoginSession(file, saved, rotate);
    const second = new LoginSession(file, saved, rotate);
    const retry = async (session: LoginSession) => {
      const auth = session.clientAuth();
      if (auth.kind !== 'bearer' || !auth.onUnauthorized) throw new Error('bearer expected');
      expect(await auth.onUnauthorized()).toBe(true);
      return auth.accessToken();
    };
    const [a, b] = await Promise.all([retry(first), retry(second)]);
    expect(calls).toEqual(['refresh-0']);
    expect(a).toBe(b);
    expect(a).not.toBe(saved.access_token);
  });

  it('says to log in again when the refresh token is refused', async () => {
    const saved = login(-10);
    file.write(saved);
    const rotate = async (): Promise<TokenPair> => {
      throw new TrellisApiError({ status: 401, code: 'invalid_grant', detail: 'the refresh token is not valid' });
    };
    const attempt = new LoginSession(file, saved, rotate).accessToken();
    await expect(attempt).rejects.toThrow(NotLoggedInError);
    await expect(attempt).rejects.toThrow(/expired or was revoked .*run `trellis login`/);
  });

  it('notices a logout by another process', async () => {
    const saved = login(-10);
    file.write(saved);
    file.remove();
    const { rotate } = fakeRefresh();
    await expect(new LoginSession(file, saved, rotate).accessToken()).rejects.toThrow(/you were logged out/);
  });
});
