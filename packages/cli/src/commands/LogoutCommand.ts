import { TrellisApiError } from '@trellis/client';
import { Command } from 'clipanion';
import { withFileLock } from '../auth/FileLock.js';
import { ExitCode } from '../exitCodes.js';
import { TrellisCommand } from './TrellisCommand.js';

export class LogoutCommand extends TrellisCommand {
  static override paths = [['logout']];

  static override usage = Command.Usage({
    category: 'Authentication',
    description: 'Log out: revoke the login on the server and delete the saved tokens',
    details: `
      Revokes the refresh token (and every token rotated from it) on the control plane, then deletes \`auth.json\`. When the server cannot be reached the file is deleted anyway and a warning says the tokens were not revoked.
    `,
    examples: [['Log out', '$0 logout']],
  });

  override async execute(): Promise<number> {
    const terminal = this.terminal;
    const file = this.authFile();
    return withFileLock(file.lockPath, async () => {
      let login: ReturnType<typeof file.read>;
      try {
        login = file.read();
      } catch {
        file.remove();
        terminal.note('Removed a damaged login file.');
        return ExitCode.OK;
      }
      if (!login) {
        if (this.json) terminal.printJson({ logged_out: false });
        else terminal.note('Not logged in.');
        return ExitCode.OK;
      }
      let revoked = true;
      try {
        await this.anonymousClient(login.server).logout(login.refresh_token);
      } catch (error) {
        // A token the server already refuses is as good as revoked.
        if (!(error instanceof TrellisApiError && (error.status === 401 || error.status === 400))) {
          revoked = false;
          terminal.warn(
            `could not revoke the login on ${login.server} (${(error as Error).message}); deleted it here only`,
          );
        }
      }
      file.remove();
      if (this.json) terminal.printJson({ logged_out: true, server: login.server, revoked });
      else terminal.success(`Logged out of ${login.server}${login.user_email ? ` (${login.user_email})` : ''}`);
      return ExitCode.OK;
    });
  }
}
