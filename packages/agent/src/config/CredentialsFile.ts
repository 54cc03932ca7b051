import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

/** What `trellis-agent register` keeps: the worker's identity at one control plane. */
export interface AgentCredentials {
  server: string;
  worker_id: string;
  worker_token: string;
  name: string;
  registered_at: string;
}

/** `$TRELLIS_AGENT_CREDENTIALS`, else `$XDG_CONFIG_HOME/trellis/agent.json` (`~/.config/trellis/agent.json`). */
export function defaultCredentialsPath(env: NodeJS.ProcessEnv): string {
  if (env.TRELLIS_AGENT_CREDENTIALS) return env.TRELLIS_AGENT_CREDENTIALS;
  const xdg = env.XDG_CONFIG_HOME;
  const configHome = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(configHome, 'trellis', 'agent.json');
}

export class CredentialsFileError extends Error {
  override name = 'CredentialsFileError';
}

/** The agent's credentials file, written atomically and readable by its owner only (0600). */
export class CredentialsFile {
  constructor(readonly path: string) {}

  exists(): boolean {
    try {
      statSync(this.path);
      return true;
    } catch {
      return false;
    }
  }

  read(): AgentCredentials | null {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new CredentialsFileError(`cannot read ${this.path}: ${(error as Error).message}`);
    }
    const mode = statSync(this.path).mode & 0o077;
    if (mode !== 0 && process.platform !== 'win32') {
      throw new CredentialsFileError(
        `${this.path} is readable by other users (mode ${(statSync(this.path).mode & 0o777).toString(8)}); run chmod 600 on it`,
      );
    }
    try {
      const parsed = JSON.parse(text) as Partial<AgentCredentials>;
      if (typeof parsed.worker_id === 'string' && typeof parsed.worker_token === 'string') {
        return { server: '', name: '', registered_at: '', ...parsed } as AgentCredentials;
      }
    } catch {
      // reported below
    }
    throw new CredentialsFileError(`${this.path} is damaged; register the agent again`);
  }

  /** A temp file created 0600, renamed over the old one: never half-written, never world-readable. */
  write(credentials: AgentCredentials): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, this.path);
  }
}
