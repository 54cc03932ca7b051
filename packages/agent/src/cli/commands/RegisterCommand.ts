import { Command, Option } from 'clipanion';
import { registerCommand } from '../registerCommand.js';
import { AgentCommand } from './AgentCommand.js';

/** `trellis-agent register --name N [--org ORG]`. */
export class RegisterCommand extends AgentCommand {
  static override paths = [['register']];

  static override usage = Command.Usage({
    description: 'Register this machine as an agent of the signed-in user, or of an organization',
    details: `
      Registers this machine as a self-hosted agent and stores the worker id and token in the credentials file (mode 0600). Uses \`TRELLIS_TOKEN\` (a CLI access token) when set, else the login of the \`trellis\` CLI (\`$XDG_CONFIG_HOME/trellis/auth.json\`), refreshed under the CLI's own lock if it is about to expire.

      With \`--org\` (name or id; admins of it) the agent joins that organization's pool: an organization's jobs run only on its own agents, never on a member's personal one.
    `,
    examples: [
      ['Register with the login of `trellis login`', '$0 register --name build-01'],
      ['An agent of an organization', '$0 register --name build-01 --org platform-team'],
      [
        'Register in CI with an access token',
        'TRELLIS_URL=https://trellis.example.com TRELLIS_TOKEN=… $0 register --name ci-runner',
      ],
      [
        'Replace existing credentials, in another file',
        '$0 register --name build-01 --credentials-file /etc/trellis/agent.json --force',
      ],
    ],
  });

  name = Option.String('--name', { description: "The agent's name (required)" });
  org = Option.String('--org', {
    description: "The organization (name or id) whose pool the agent joins (default: the signed-in user's own)",
  });
  url = Option.String('--url', { description: "Control plane address (default: TRELLIS_URL, else the CLI login's)" });
  credentialsFile = Option.String('--credentials-file', {
    description: 'Where to store the credentials (default: TRELLIS_AGENT_CREDENTIALS or ~/.config/trellis/agent.json)',
  });
  force = Option.Boolean('--force', false, { description: 'Replace an existing credentials file' });

  override execute(): Promise<number> {
    return registerCommand(
      { name: this.name, org: this.org, url: this.url, 'credentials-file': this.credentialsFile, force: this.force },
      this.io,
    );
  }
}
