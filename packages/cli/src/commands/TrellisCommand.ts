import { TrellisClient } from '@trellis/client';
import { Command, Option, UsageError } from 'clipanion';
import { AuthFile, authFilePath } from '../auth/AuthFile.js';
import { LoginSession } from '../auth/LoginSession.js';
import { NotLoggedInError } from '../errors.js';
import { type ErrorContext, type ExplainedError, explainError } from '../explainError.js';
import { Terminal } from '../output/Terminal.js';
import { CLI_VERSION } from '../version.js';

/** Where `trellis login` goes when neither `--server` nor `TRELLIS_SERVER` says otherwise. */
export const DEFAULT_SERVER = 'http://localhost:8080';

/** A control plane URL without its trailing slash, or a usage error for anything else. */
export function normaliseServer(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${source} must be an http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${source} must be an http(s) URL, got "${value}"`);
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * What every `trellis` command shares: `--server` and `--json`, the terminal, a client signed in
 * with the saved login, and errors turned into one line and an exit code.
 */
export abstract class TrellisCommand extends Command {
  server = Option.String('--server', {
    description: 'URL of the control plane (default: $TRELLIS_SERVER, else the one you logged in to)',
  });
  json = Option.Boolean('--json', false, { description: 'Print JSON for scripts instead of text for people' });

  /** Set when the command failed; the runner prints it and exits with its code. */
  failure: ExplainedError | null = null;

  /** The organization the command acts in, once known: errors then name it. */
  protected orgName: string | undefined;

  private terminalInstance: Terminal | null = null;

  get terminal(): Terminal {
    this.terminalInstance ??= new Terminal({
      stdin: this.context.stdin,
      stdout: this.context.stdout,
      stderr: this.context.stderr,
      env: this.context.env,
    });
    return this.terminalInstance;
  }

  get env(): Record<string, string | undefined> {
    return this.context.env;
  }

  /**
   * The flag of each API field this command fills from one whose name differs (`--drift-interval`
   * for `drift_detection.interval_minutes`; `variables.*` for `--var NAME`); an item of a list
   * (`paths.0`, `paths[0]`) is its list's. Otherwise a field `foo_bar` (or `foo_id`) is `--foo-bar` (or
   * `--foo`) when the command has that flag.
   */
  protected fieldFlags: Record<string, string> = {};

  /** What errors name: the configuration and plan job the command acted on, once known. */
  protected errorContext: ErrorContext = {};

  override async catch(error: unknown): Promise<void> {
    this.failure = explainError(error, {
      ...this.errorContext,
      tokenFromEnv: Boolean(this.env.TRELLIS_TOKEN),
      orgName: this.orgName,
      flagFor: (field) => this.flagFor(field),
    });
  }

  /** The flag that gave `field`, by `fieldFlags` or by name; undefined when the person typed none. */
  private flagFor(path: string): string | undefined {
    const field = path.replace(/(\.\d+|\[\d+\])+$/, '');
    const mapped = this.fieldFlags[field];
    if (mapped !== undefined) return mapped;
    for (const [pattern, flag] of Object.entries(this.fieldFlags)) {
      if (!pattern.endsWith('.*') || !field.startsWith(pattern.slice(0, -1))) continue;
      return `${flag} ${field.slice(pattern.length - 1).split('.')[0]}`;
    }
    const name = (field.split('.').pop() ?? field).replaceAll('_', '-');
    let usage = '';
    try {
      usage = this.cli.usage(this, { detailed: false });
    } catch {
      return undefined;
    }
    const flags = [`--${name}`, ...(name.endsWith('-id') ? [`--${name.slice(0, -3)}`] : [])];
    return flags.find((flag) => new RegExp(`(?<![\\w-])${flag}(?![\\w-])`).test(usage));
  }

  /** `--server`, else `$TRELLIS_SERVER`, normalised; undefined when neither is given. */
  protected chosenServer(): string | undefined {
    if (this.server !== undefined) return normaliseServer(this.server, '--server');
    const fromEnv = this.env.TRELLIS_SERVER;
    if (fromEnv) return normaliseServer(fromEnv, 'TRELLIS_SERVER');
    return undefined;
  }

  protected authFile(): AuthFile {
    return new AuthFile(authFilePath(this.env));
  }

  protected anonymousClient(server: string): TrellisClient {
    return new TrellisClient({ baseUrl: server, userAgent: userAgent() });
  }

  /**
   * A client signed in as the saved login (refreshing its tokens as needed), or with
   * `$TRELLIS_TOKEN` (an API token `trt_…` or an access token, for CI) when that is set: it wins over
   * the saved login, is never written to disk and never refreshed.
   */
  protected signedInClient(): TrellisClient {
    const chosen = this.chosenServer();
    const token = this.env.TRELLIS_TOKEN;
    if (token) {
      if (!chosen) throw new UsageError('TRELLIS_TOKEN needs the server too: set TRELLIS_SERVER or pass --server');
      return new TrellisClient({
        baseUrl: chosen,
        userAgent: userAgent(),
        auth: { kind: 'bearer', accessToken: () => token },
      });
    }
    const file = this.authFile();
    const login = file.read();
    if (!login) {
      throw new NotLoggedInError(`not logged in; run \`trellis login${chosen ? ` --server ${chosen}` : ''}\``);
    }
    if (chosen && chosen !== login.server) {
      throw new NotLoggedInError(
        `logged in to ${login.server}, not ${chosen}; run \`trellis login --server ${chosen}\``,
      );
    }
    const session = new LoginSession(file, login, (refreshToken) =>
      this.anonymousClient(login.server).refreshTokens(refreshToken),
    );
    return new TrellisClient({ baseUrl: login.server, userAgent: userAgent(), auth: session.clientAuth() });
  }
}

export function userAgent(): string {
  return `trellis-cli/${CLI_VERSION} node/${process.versions.node}`;
}
