import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import type { TokenPair } from '@trellis/core';
import { type LockOptions, withFileLock } from './FileLock.js';
import { jwtExpiry } from './jwt.js';

/** What `trellis login` keeps (SPEC §5.1): one login, to one control plane. */
export interface StoredLogin {
  server: string;
  user_email: string;
  access_token: string;
  /** ISO time, from the access token's `exp` claim. */
  access_token_expires_at: string;
  refresh_token: string;
}

/** Refresh this long before the access token expires, so a request never races the expiry. */
export const REFRESH_MARGIN_MS = 2 * 60 * 1000;

/** `$XDG_CONFIG_HOME/trellis/auth.json`, by default `~/.config/trellis/auth.json`. */
export function loginFilePath(env: Record<string, string | undefined>): string {
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  const configHome = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(configHome, 'trellis', 'auth.json');
}

/** Builds the stored form of a fresh token pair. */
export function storedLogin(
  server: string,
  email: string,
  tokens: TokenPair,
  now: () => number = Date.now,
): StoredLogin {
  const expiry = jwtExpiry(tokens.access_token) ?? new Date(now() + 60 * 60 * 1000);
  return {
    server,
    user_email: email,
    access_token: tokens.access_token,
    access_token_expires_at: expiry.toISOString(),
    refresh_token: tokens.refresh_token,
  };
}

/** True when the access token is gone within the refresh margin (or its expiry is unreadable). */
export function expiresSoon(login: StoredLogin, now: number): boolean {
  const expiresAt = Date.parse(login.access_token_expires_at);
  return Number.isNaN(expiresAt) || expiresAt - now < REFRESH_MARGIN_MS;
}

/** The login file exists but cannot be read as a login. */
export class DamagedLoginError extends Error {
  override name = 'DamagedLoginError';
  constructor(readonly path: string) {
    super(`${path} is damaged`);
  }
}

export interface LoginStoreOptions {
  lock?: LockOptions;
  now?: () => number;
}

/**
 * The login file shared by `trellis` and `trellis-agent`: read, written atomically with mode 0600,
 * removed, and refreshed under one lock (`auth.json.lock`, see {@link withFileLock}). Every change
 * goes through the lock so that, when several processes refresh at once, only one presents the
 * refresh token and the others pick up its result (presenting a rotated refresh token would
 * revoke the login).
 */
export class LoginStore {
  private readonly now: () => number;

  constructor(
    readonly path: string,
    private readonly options: LoginStoreOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  get lockPath(): string {
    return `${this.path}.lock`;
  }

  /** The login, null when there is none; throws {@link DamagedLoginError} for an unreadable file. */
  read(): StoredLogin | null {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    try {
      const login = JSON.parse(text) as Partial<StoredLogin>;
      if (
        typeof login.server === 'string' &&
        typeof login.access_token === 'string' &&
        typeof login.refresh_token === 'string' &&
        typeof login.access_token_expires_at === 'string'
      ) {
        return { user_email: '', ...login } as StoredLogin;
      }
    } catch {
      // fall through: a damaged file is the same as no login
    }
    throw new DamagedLoginError(this.path);
  }

  /**
   * Writes to a temporary file created 0600 and renames it over the old one, so a reader never
   * sees half a file and the tokens are never readable by others, whatever the umask. Callers
   * hold the lock ({@link withLock}).
   */
  write(login: StoredLogin): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, this.path);
  }

  remove(): void {
    rmSync(this.path, { force: true });
  }

  /** Runs `work` holding the login's lock. */
  withLock<T>(work: () => Promise<T>): Promise<T> {
    return withFileLock(this.lockPath, work, this.options.lock);
  }

  /**
   * Under the lock, re-reads the login and, if `needed` still says so, rotates its refresh token
   * and saves the new pair. Returns the login as it is now on disk (null when there is none).
   * `needed` defaults to "the access token expires soon".
   */
  refresh(
    rotate: (login: StoredLogin) => Promise<TokenPair>,
    needed: (login: StoredLogin) => boolean = (login) => expiresSoon(login, this.now()),
  ): Promise<StoredLogin | null> {
    return this.withLock(async () => {
      const onDisk = this.read();
      if (!onDisk || !needed(onDisk)) return onDisk;
      const tokens = await rotate(onDisk);
      const next = storedLogin(onDisk.server, onDisk.user_email, tokens, this.now);
      this.write(next);
      return next;
    });
  }
}
