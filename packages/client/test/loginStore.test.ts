/**
 * The login store shared by `trellis` and `trellis-agent`: processes refreshing one login at the
 * same time take turns under its lock, so a refresh token is never presented twice (which the
 * server treats as theft and answers by revoking the login) and the file is never torn.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DamagedLoginError,
  expiresSoon,
  LockTimeoutError,
  LoginStore,
  loginFilePath,
  type RetryClock,
  type StoredLogin,
} from '../src/index.js';

const CLIENT_MODULE = fileURLToPath(new URL('../dist/index.js', import.meta.url));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-login-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** An access token whose `exp` is inside the refresh margin, so every holder wants to refresh it. */
function shortLivedAccess(n: number): string {
  const claims = Buffer.from(JSON.stringify({ n, exp: Math.floor(Date.now() / 1000) + 30 })).toString('base64url');
  return `e30.${claims}.sig`;
}

/** A refresh endpoint that rotates refresh tokens and counts any already-rotated one presented. */
async function refreshServer() {
  let current = 'refresh-0';
  let generation = 0;
  const counts = { rotations: 0, reused: 0 };
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const presented = (JSON.parse(body) as { refresh_token: string }).refresh_token;
      if (presented !== current) {
        counts.reused += 1;
        response.writeHead(401).end();
        return;
      }
      generation += 1;
      counts.rotations += 1;
      current = `refresh-${generation}`;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ access_token: shortLivedAccess(generation), refresh_token: current }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/refresh`;
  return { url, counts, current: () => current, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** A process that refreshes the login `times` times through the shared store (as `trellis` and `trellis-agent register` do). */
function refresher(path: string, url: string, times: number): Promise<number | null> {
  const script = `
    import { LoginStore } from ${JSON.stringify(CLIENT_MODULE)};
    const store = new LoginStore(${JSON.stringify(path)}, { lock: { pollMs: 5 } });
    for (let i = 0; i < ${times}; i++) {
      await store.refresh(async (login) => {
        const response = await fetch(${JSON.stringify(url)}, {
          method: 'POST',
          body: JSON.stringify({ refresh_token: login.refresh_token }),
        });
        if (!response.ok) throw new Error('refresh refused: ' + response.status);
        return response.json();
      });
    }`;
  return run(script);
}

/** A process that reads the login over and over, exiting 1 if it ever finds it damaged. */
function reader(path: string, times: number): Promise<number | null> {
  const script = `
    import { LoginStore } from ${JSON.stringify(CLIENT_MODULE)};
    const store = new LoginStore(${JSON.stringify(path)});
    for (let i = 0; i < ${times}; i++) {
      if (!store.read()) process.exit(1);
      await new Promise((resolve) => setImmediate(resolve));
    }`;
  return run(script);
}

function run(script: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', resolve);
  });
}

function initialLogin(): StoredLogin {
  return {
    server: 'http://trellis.test',
    user_email: 'a@example.com',
    access_token: shortLivedAccess(0),
    access_token_expires_at: new Date(Date.now() + 30_000).toISOString(),
    refresh_token: 'refresh-0',
  };
}

describe('LoginStore', () => {
  it('lives at $XDG_CONFIG_HOME/trellis/auth.json (else ~/.config), written 0600', () => {
    expect(loginFilePath({ XDG_CONFIG_HOME: '/x/cfg', HOME: '/home/a' })).toBe('/x/cfg/trellis/auth.json');
    expect(loginFilePath({ HOME: '/home/a' })).toBe('/home/a/.config/trellis/auth.json');
    expect(loginFilePath({ XDG_CONFIG_HOME: 'relative', HOME: '/home/a' })).toBe('/home/a/.config/trellis/auth.json');
    const store = new LoginStore(loginFilePath({ XDG_CONFIG_HOME: dir }));
    store.write(initialLogin());
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    expect(store.read()?.refresh_token).toBe('refresh-0');
  });

  it('reports a damaged file instead of taking it for a login', async () => {
    const store = new LoginStore(join(dir, 'auth.json'));
    store.write(initialLogin());
    writeFileSync(store.path, '{"server": "http://trellis.test"');
    expect(() => store.read()).toThrow(DamagedLoginError);
  });

  it('does not rotate when the login on disk no longer needs it', async () => {
    const store = new LoginStore(join(dir, 'auth.json'));
    const fresh = { ...initialLogin(), access_token_expires_at: new Date(Date.now() + 3_600_000).toISOString() };
    store.write(fresh);
    let rotations = 0;
    const after = await store.refresh(async () => {
      rotations += 1;
      return { access_token: 'x', refresh_token: 'y' };
    });
    expect(rotations).toBe(0);
    expect(after?.refresh_token).toBe('refresh-0');
    expect(expiresSoon(fresh, Date.now())).toBe(false);
  });

  it('processes refreshing one login concurrently never reuse a refresh token nor tear the file', async () => {
    const server = await refreshServer();
    try {
      const store = new LoginStore(join(dir, 'trellis', 'auth.json'));
      store.write(initialLogin());
      const codes = await Promise.all([
        refresher(store.path, server.url, 8),
        refresher(store.path, server.url, 8),
        refresher(store.path, server.url, 8),
        reader(store.path, 400),
      ]);
      expect(codes).toEqual([0, 0, 0, 0]);
      expect(server.counts.reused).toBe(0);
      expect(server.counts.rotations).toBe(24);
      const final = JSON.parse(readFileSync(store.path, 'utf8')) as StoredLogin;
      expect(final.refresh_token).toBe(server.current());
      expect(final.server).toBe('http://trellis.test');
      expect(final.user_email).toBe('a@example.com');
      expect(statSync(store.path).mode & 0o777).toBe(0o600);
    } finally {
      await server.close();
    }
  });

  it('waits for a lock a live process holds on the injected clock, then gives up', async () => {
    let now = 0;
    let waits = 0;
    const clock: RetryClock = {
      now: () => new Date(now),
      async sleep(ms) {
        waits += 1;
        now += ms;
        return true;
      },
    };
    const store = new LoginStore(join(dir, 'auth.json'), { lock: { clock, timeoutMs: 5000, pollMs: 50 } });
    writeFileSync(store.lockPath, `${process.pid}@${hostname()}@${Date.now()}@x`);
    let ran = false;
    const attempt = store.withLock(async () => {
      ran = true;
    });
    await expect(attempt).rejects.toThrow(LockTimeoutError);
    expect(ran).toBe(false);
    expect(now).toBeGreaterThan(5000);
    expect(waits).toBeGreaterThan(30);
    expect(readFileSync(store.lockPath, 'utf8')).toContain(`${process.pid}@`);
  });
});
