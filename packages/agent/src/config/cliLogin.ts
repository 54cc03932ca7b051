import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TokenPair } from '@trellis/core';

/** The part of the `trellis` CLI's login (`$XDG_CONFIG_HOME/trellis/auth.json`) the agent uses. */
export interface CliLogin {
  server: string;
  user_email?: string;
  access_token: string;
  access_token_expires_at: string;
  refresh_token: string;
}

export function cliAuthPath(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME;
  const configHome = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(configHome, 'trellis', 'auth.json');
}

export function readCliLogin(path: string): CliLogin | null {
  try {
    const login = JSON.parse(readFileSync(path, 'utf8')) as Partial<CliLogin>;
    if (typeof login.server === 'string' && typeof login.access_token === 'string') return login as CliLogin;
  } catch {
    // no login, or not one we can use
  }
  return null;
}

function jwtExpiry(token: string): Date | null {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      exp?: number;
    };
    return typeof payload.exp === 'number' ? new Date(payload.exp * 1000) : null;
  } catch {
    return null;
  }
}

const MARGIN_MS = 2 * 60_000;

function fresh(login: CliLogin): boolean {
  const expires = Date.parse(login.access_token_expires_at);
  return Number.isFinite(expires) && expires - Date.now() > MARGIN_MS;
}

/**
 * A usable access token of the CLI's login, refreshed if it is about to expire. The refresh takes
 * the CLI's own lock file (`auth.json.lock`, created exclusively) and re-reads the file under it,
 * as `trellis` does, so the two never present the same refresh token twice (that would revoke
 * the login).
 */
export async function cliAccessToken(
  path: string,
  refresh: (server: string, refreshToken: string) => Promise<TokenPair>,
): Promise<CliLogin | null> {
  const login = readCliLogin(path);
  if (!login || fresh(login)) return login;
  return withLock(`${path}.lock`, async () => {
    const current = readCliLogin(path);
    if (!current || fresh(current)) return current;
    const tokens = await refresh(current.server, current.refresh_token);
    const next: CliLogin = {
      ...current,
      access_token: tokens.access_token,
      refresh_token: tokens.refresh_token,
      access_token_expires_at: (jwtExpiry(tokens.access_token) ?? new Date(Date.now() + 3_600_000)).toISOString(),
    };
    const temporary = `${path}.${process.pid}.tmp`;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const fd = openSync(temporary, 'w', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(next, null, 2)}\n`);
    } finally {
      closeSync(fd);
    }
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
    return next;
  });
}

async function withLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 30_000;
  const owner = `${process.pid}@trellis-agent@${Date.now()}`;
  for (;;) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, owner);
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      try {
        if (Date.now() - statSync(path).mtimeMs > 60_000) unlinkSync(path);
      } catch {
        // gone already
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the lock ${path} held by a trellis process`);
      await sleep(50 + Math.random() * 50);
    }
  }
  try {
    return await work();
  } finally {
    try {
      if (readFileSync(path, 'utf8') === owner) unlinkSync(path);
    } catch {
      // released already
    }
  }
}
