import { DamagedLoginError, LoginStore, loginFilePath, type StoredLogin } from '@trellis/client';
import { NotLoggedInError } from '../errors.js';

export type { StoredLogin };

/** `$XDG_CONFIG_HOME/trellis/auth.json`, by default `~/.config/trellis/auth.json`. */
export const authFilePath = loginFilePath;

/** The shared login store of `@trellis/client`, reporting a damaged file as "not logged in". */
export class AuthFile extends LoginStore {
  override read(): StoredLogin | null {
    try {
      return super.read();
    } catch (error) {
      if (error instanceof DamagedLoginError) {
        throw new NotLoggedInError(`${this.path} is damaged; run \`trellis login\` to replace it`);
      }
      throw error;
    }
  }
}
