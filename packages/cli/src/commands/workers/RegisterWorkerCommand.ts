import { Command, Option } from 'clipanion';
import { renderFields } from '../../output/table.js';
import { resolveOrg } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class RegisterWorkerCommand extends TrellisCommand {
  static override paths = [['workers', 'register']];

  static override usage = Command.Usage({
    category: 'Workers',
    description: 'Register a self-hosted agent and print its credentials',
    details: `
      Prints the worker id and its token. The token is shown this once: the server keeps only its hash, so a lost token means registering again. Give both to the agent as \`TRELLIS_WORKER_ID\` and \`TRELLIS_WORKER_TOKEN\`.

      With \`--org\` the agent joins that organization's pool (admins only): it runs only that organization's jobs, and a personal agent only yours.

      On the machine that runs the agent, \`trellis-agent register --name NAME [--org ORG]\` does the same in one step and writes the agent's credentials file itself (mode 0600), so the token is never printed.
    `,
    examples: [
      ['Register an agent', '$0 workers register --name build-box'],
      ['An agent of an organization', '$0 workers register --name build-box --org platform-team'],
      [
        'Straight into an env file',
        '$0 workers register --name build-box --json | jq -r \'"TRELLIS_WORKER_ID=\\(.worker_id)\\nTRELLIS_WORKER_TOKEN=\\(.worker_token)"\' > agent.env',
      ],
    ],
  });

  name = Option.String('--name', { required: true, description: 'Name of the agent' });
  org = Option.String('--org', { description: 'The organization (name or id) whose pool the agent joins' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const org = this.org !== undefined ? await resolveOrg(client, this.org) : null;
    this.orgName = org?.name;
    const registration = await client.registerWorker({
      name: this.name,
      mode: 'self-hosted',
      ...(org ? { orgId: org.id } : {}),
    });
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson({ ...registration, server: client.baseUrl });
      return 0;
    }
    terminal.success(
      `Registered agent ${terminal.err.bold(this.name)}${org ? ` for organization ${terminal.err.bold(org.name)}` : ''}`,
    );
    terminal.print(
      renderFields(
        [
          ['TRELLIS_URL', client.baseUrl],
          ['TRELLIS_WORKER_ID', registration.worker_id],
          ['TRELLIS_WORKER_TOKEN', registration.worker_token],
        ],
        terminal.out.bold,
      ),
    );
    terminal.warn('This token is shown only once: store it now (the server keeps only its hash).');
    return 0;
  }
}
