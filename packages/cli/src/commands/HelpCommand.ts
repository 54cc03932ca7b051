import { Command } from 'clipanion';
import { EXIT_CODES_HELP } from '../exitCodes.js';

export const GENERAL_DETAILS = `
Environment:
  TRELLIS_SERVER    control plane URL (like --server)
  TRELLIS_WEB_URL   web interface URL for \`trellis login\` (default: the server URL)
  TRELLIS_TOKEN     an API token (trt_…, see \`trellis tokens create\`) or access token to use
                    instead of the saved login (CI), with TRELLIS_SERVER; never saved
  XDG_CONFIG_HOME   where trellis/auth.json is kept (default: ~/.config)
  NO_COLOR          no colour (there is none anyway when output is not a terminal)
  TRELLIS_DEBUG     print the stack trace of an error after its one-line message

Exit codes:
${EXIT_CODES_HELP.map((line) => `  ${line.replaceAll('`', '')}`).join('\n')}

Docs: docs/cli.md
`;

/** `trellis`, `trellis help`, `trellis --help`: the list of commands, environment and exit codes. */
export class HelpCommand extends Command {
  static override paths = [['help']];

  override async execute(): Promise<number> {
    this.context.stdout.write(this.cli.usage(null));
    this.context.stdout.write(GENERAL_DETAILS);
    return 0;
  }
}
