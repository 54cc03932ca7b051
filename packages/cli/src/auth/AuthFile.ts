import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { NotLoggedInError } from '../errors.js';

/** What `trellis login` keeps (SPEC §5.1): one login, to one control plane. */
export interface StoredLogin {
  server: string;
  user_email: string;
  access_token: string;
  /** ISO time, from the access token's `exp` claim. */
  access_token_expires_at: string;
  refresh_token: string;
}

/** `$XDG_CONFIG_HOME/trellis/auth.json`, by default `~/.config/trellis/auth.json`. */
export function authFilePath(env: Record<string, string | undefined>): string {
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  const configHome = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(configHome, 'trellis', 'auth.json');
}

/** The auth file: read, written atomically with mode 0600, removed. */
export class AuthFile {
  constructor(readonly path: string) {}

  get lockPath(): string {
    return `${this.path}.lock`;
  }

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
    throw new NotLoggedInError(`${this.path} is damaged; run \`trellis login\` to replace it`);
  }

  /**
   * Writes to a temporary file created 0600 and renames it over the old one, so a reader never
   * sees half a file and the tokens are never readable by others, whatever the umask.
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
}
