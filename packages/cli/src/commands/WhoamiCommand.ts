import { Command } from 'clipanion';
import { renderFields } from '../output/table.js';
import { TrellisCommand } from './TrellisCommand.js';

export class WhoamiCommand extends TrellisCommand {
  static override paths = [['whoami']];

  static override usage = Command.Usage({
    category: 'Authentication',
    description: 'Show who you are logged in as, and where',
    details: 'Asks the control plane, so it also checks that the login still works (refreshing its tokens if needed).',
    examples: [
      ['Show the current login', '$0 whoami'],
      ['Just the email, for a script', "$0 whoami --json | jq -r '.email'"],
    ],
  });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const user = await client.whoami();
    if (this.json) {
      this.terminal.printJson({ server: client.baseUrl, ...user });
      return 0;
    }
    const { out } = this.terminal;
    this.terminal.print(
      renderFields(
        [
          ['Server', client.baseUrl],
          ['Email', user.email],
          ['Name', user.name],
          ['User ID', user.id],
        ],
        out.bold,
      ),
    );
    return 0;
  }
}
