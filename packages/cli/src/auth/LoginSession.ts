import { type ClientAuth, TrellisApiError } from '@trellis/client';
import type { TokenPair } from '@trellis/core';
import { NotLoggedInError } from '../errors.js';
import type { AuthFile, StoredLogin } from './AuthFile.js';
import { withFileLock } from './FileLock.js';
import { jwtExpiry } from './jwt.js';

/** Refresh this long before the access token expires, so a request never races the expiry. */
export const REFRESH_MARGIN_MS = 2 * 60 * 1000;

/** Builds the stored form of a fresh token pair. */
export function storedLogin(server: string, email: string, tokens: TokenPair): StoredLogin {
  const expiry = jwtExpiry(tokens.access_token) ?? new Date(Date.now() + 60 * 60 * 1000);
  return {
    server,
    user_email: email,
    access_token: tokens.access_token,
    access_token_expires_at: expiry.toISOString(),
    refresh_token: tokens.refresh_token,
  };
}

/**
 * The bearer tokens of the saved login. The access token is refreshed shortly before it expires
 * and after a `401`; every refresh happens under the auth file's lock and re-reads the file first,
 * so when several `trellis` processes refresh at once only one presents the refresh token and the
 * others pick up its result (presenting a rotated refresh token would revoke the login).
 */
export class LoginSession {
  private login: StoredLogin;

  constructor(
    private readonly file: AuthFile,
    login: StoredLogin,
    private readonly rotate: (refreshToken: string) => Promise<TokenPair>,
    private readonly now: () => number = Date.now,
  ) {
    this.login = login;
  }

  get server(): string {
    return this.login.server;
  }

  get email(): string {
    return this.login.user_email;
  }

  clientAuth(): ClientAuth {
    return {
      kind: 'bearer',
      accessToken: () => this.accessToken(),
      onUnauthorized: async () => {
        await this.refresh(this.login.access_token);
        return true;
      },
    };
  }

  async accessToken(): Promise<string> {
    if (this.expiresSoon(this.login)) await this.refresh();
    return this.login.access_token;
  }

  private expiresSoon(login: StoredLogin): boolean {
    const expiresAt = Date.parse(login.access_token_expires_at);
    return Number.isNaN(expiresAt) || expiresAt - this.now() < REFRESH_MARGIN_MS;
  }

  /** `rejected`: the access token the server just refused, which must not be used again. */
  private async refresh(rejected?: string): Promise<void> {
    await withFileLock(this.file.lockPath, async () => {
      const onDisk = this.file.read();
      if (!onDisk || onDisk.server !== this.login.server) {
        throw new NotLoggedInError(`you were logged out of ${this.login.server}; run \`trellis login\``);
      }
      // Another trellis process may have refreshed while this one waited for the lock.
      this.login = onDisk;
      const needed = this.expiresSoon(onDisk) || (rejected !== undefined && onDisk.access_token === rejected);
      if (!needed) return;
      let tokens: TokenPair;
      try {
        tokens = await this.rotate(onDisk.refresh_token);
      } catch (error) {
        if (error instanceof TrellisApiError && (error.status === 401 || error.status === 400)) {
          throw new NotLoggedInError(
            `your login to ${onDisk.server} has expired or was revoked (${error.detail}); run \`trellis login\``,
          );
        }
        throw error;
      }
      this.login = storedLogin(onDisk.server, onDisk.user_email, tokens);
      this.file.write(this.login);
    });
  }
}
