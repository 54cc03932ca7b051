import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { TrellisApiError, type TrellisClient, TrellisConnectionError, TrellisRedirectError } from '@trellis/client';
import { Command, Option } from 'clipanion';
import { withFileLock } from '../auth/FileLock.js';
import { storedLogin } from '../auth/LoginSession.js';
import { NotLoggedInError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { Prompter } from '../output/Prompter.js';
import { DEFAULT_SERVER, normaliseServer, TrellisCommand } from './TrellisCommand.js';

export class LoginCommand extends TrellisCommand {
  static override paths = [['login']];

  static override usage = Command.Usage({
    category: 'Authentication',
    description: 'Log in to a Trellis control plane',
    details: `
      Logs in with the device authorization grant: the CLI makes a device code and opens \`{web_url}/cli/login?device_code=…\` in your browser (the URL is always printed too). Approve the login there, then type the 6-character verification code the page shows.

      The code is read from standard input, so a script can pipe it in. The login is saved in \`$XDG_CONFIG_HOME/trellis/auth.json\` (by default \`~/.config/trellis/auth.json\`, mode 0600) and its tokens are refreshed automatically.

      The server is \`--server\`, else \`$TRELLIS_SERVER\`, else the server of the current login, else ${DEFAULT_SERVER}. The web interface is \`--web-url\`, else \`$TRELLIS_WEB_URL\`, else the server URL.
    `,
    examples: [
      ['Log in to a local control plane', '$0 login'],
      [
        'Log in to another server without opening a browser',
        '$0 login --server https://trellis.example.com --no-browser',
      ],
      ['Answer the code from a script', 'echo BCDFGH | $0 login --no-browser'],
    ],
  });

  webUrl = Option.String('--web-url', { description: 'URL of the web interface (default: the server URL)' });
  browser = Option.Boolean('--browser', true, {
    description: 'Open the login page in a browser (--no-browser: only print it)',
  });

  override async execute(): Promise<number> {
    const terminal = this.terminal;
    const file = this.authFile();
    const previous = (() => {
      try {
        return file.read();
      } catch {
        return null;
      }
    })();
    const server = this.chosenServer() ?? previous?.server ?? DEFAULT_SERVER;
    const webUrl = this.webUrl
      ? normaliseServer(this.webUrl, '--web-url')
      : this.env.TRELLIS_WEB_URL
        ? normaliseServer(this.env.TRELLIS_WEB_URL, 'TRELLIS_WEB_URL')
        : server;
    const client = this.anonymousClient(server);
    await ensureReachable(server);

    const deviceCode = randomUUID();
    const loginUrl = `${webUrl}/cli/login?device_code=${deviceCode}`;
    terminal.note(`To log in to ${terminal.err.bold(server)}, open this page and approve the login:\n`);
    terminal.note(`  ${terminal.err.cyan(terminal.err.underline(loginUrl))}\n`);
    if (this.browser && terminal.interactive && openBrowser(loginUrl, this.env)) {
      terminal.note(terminal.err.dim('(opened in your browser)'));
    }

    const prompter = new Prompter(terminal);
    try {
      for (;;) {
        const code = await prompter.ask('Verification code: ');
        if (code === null) throw new NotLoggedInError('no verification code was entered; run `trellis login` again');
        if (code === '') continue;
        try {
          const result = await client.exchangeCliLogin({ device_code: deviceCode, verification_code: code });
          const login = storedLogin(server, result.user_email, result);
          // Under the lock: a refresh of the previous login in another process must not overwrite this one.
          await withFileLock(file.lockPath, async () => file.write(login));
          if (previous && previous.server === server) await revokeQuietly(client, previous.refresh_token);
          if (this.json) terminal.printJson({ server, user_email: result.user_email });
          else terminal.success(`Logged in to ${server} as ${terminal.err.bold(result.user_email)}`);
          return ExitCode.OK;
        } catch (error) {
          if (!(error instanceof TrellisApiError)) throw error;
          if (error.code === 'authorization_pending') {
            terminal.warn(
              'This login has not been approved yet: open the page above, approve it, then type the code it shows.',
            );
            continue;
          }
          if (error.code === 'invalid_grant' && /attempts? left/.test(error.detail)) {
            terminal.warn(`${error.detail}; try again.`);
            continue;
          }
          if (error.code === 'expired_token' || error.code === 'invalid_grant') {
            throw new NotLoggedInError(`${error.detail} [${error.code}]`);
          }
          if (error.code === 'validation_failed') {
            terminal.warn(`${error.errors.map((issue) => issue.message).join('; ') || error.detail}; try again.`);
            continue;
          }
          throw error;
        }
      }
    } finally {
      prompter.close();
    }
  }
}

/**
 * Fails fast, before sending anyone to the browser, when the server is not there, or when it
 * redirects: the client would refuse the redirect when exchanging the code anyway (it never
 * follows one, so that no token leaves for another address), and the user should hear so now.
 */
async function ensureReachable(server: string): Promise<void> {
  let response: Response;
  try {
    response = await fetch(`${server}/healthz`, { signal: AbortSignal.timeout(10_000), redirect: 'manual' });
    await response.body?.cancel();
  } catch (error) {
    throw new TrellisConnectionError(server, error);
  }
  if (response.status >= 300 && response.status < 400 && response.status !== 304) {
    const location = response.headers.get('location');
    throw new TrellisRedirectError(
      `${server}/healthz`,
      response.status,
      location === null ? null : new URL(location, `${server}/healthz`).toString(),
    );
  }
}

/** Best effort: a replaced login should not stay valid on the server. */
async function revokeQuietly(client: TrellisClient, refreshToken: string) {
  try {
    await client.logout(refreshToken);
  } catch {
    // the old login may already be dead; the new one is what matters
  }
}

/** Opens the page with the platform's opener when there is one; never fails the login. */
function openBrowser(url: string, env: Record<string, string | undefined>): boolean {
  if (env.TRELLIS_NO_BROWSER) return false;
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? null : 'xdg-open';
  if (!opener) return false;
  const onPath = (env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, opener)));
  if (!onPath) return false;
  if (opener === 'xdg-open' && !env.DISPLAY && !env.WAYLAND_DISPLAY) return false;
  try {
    const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
