import { type ClientAuth, expiresSoon, LockTimeoutError, TrellisApiError } from '@trellis/client';
import type { TokenPair } from '@trellis/core';
import { CliError, NotLoggedInError } from '../errors.js';
import type { AuthFile, StoredLogin } from './AuthFile.js';

export { REFRESH_MARGIN_MS, storedLogin } from '@trellis/client';

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
    return expiresSoon(login, this.now());
  }

  /** `rejected`: the access token the server just refused, which must not be used again. */
  private async refresh(rejected?: string): Promise<void> {
    const server = this.login.server;
    const loggedOut = () => new NotLoggedInError(`you were logged out of ${server}; run \`trellis login\``);
    let next: StoredLogin | null;
    try {
      // Another process may have refreshed while this one waited for the lock: the store
      // re-reads the file under it and only rotates when the login on disk still needs it.
      next = await this.file.refresh(
        async (onDisk) => {
          try {
            return await this.rotate(onDisk.refresh_token);
          } catch (error) {
            if (error instanceof TrellisApiError && (error.status === 401 || error.status === 400)) {
              throw new NotLoggedInError(
                `your login to ${onDisk.server} has expired or was revoked (${error.detail}); run \`trellis login\``,
              );
            }
            throw error;
          }
        },
        (onDisk) => {
          if (onDisk.server !== server) throw loggedOut();
          return this.expiresSoon(onDisk) || (rejected !== undefined && onDisk.access_token === rejected);
        },
      );
    } catch (error) {
      if (error instanceof LockTimeoutError) throw new CliError(error.message);
      throw error;
    }
    if (!next) throw loggedOut();
    this.login = next;
  }
}
