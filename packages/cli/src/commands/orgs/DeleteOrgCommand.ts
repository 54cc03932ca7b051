import { Command, Option, UsageError } from 'clipanion';
import { Prompter } from '../../output/Prompter.js';
import { resolveOrg } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class DeleteOrgCommand extends TrellisCommand {
  static override paths = [['orgs', 'delete']];

  static override usage = Command.Usage({
    category: 'Organizations',
    description: 'Delete an organization and everything it owns (owners)',
    details: `
      Its vineyards, configurations, jobs, logs, agents, tokens, plan files and state versions go with it; the engine's resources in your clouds stay (destroy them first if they must go).

      Refused with \`org_busy\` while one of its jobs is queued or running: cancel them first (\`trellis jobs list --org ORG\`).

      Asks you to type the organization's name first; \`--yes\` skips the question (needed when standard input is not a terminal). With \`--json\`: \`{id, name, deleted: true}\`.
    `,
    examples: [
      ['Delete, after confirming', '$0 orgs delete old-team'],
      ['From a script', '$0 orgs delete old-team --yes'],
    ],
  });

  org = Option.String({ name: 'org' });
  yes = Option.Boolean('-y,--yes', false, { description: 'Do not ask for confirmation' });

  override async execute(): Promise<number> {
    if (!this.yes && !this.terminal.interactive) {
      throw new UsageError('orgs delete asks for confirmation: pass --yes when not at a terminal');
    }
    const client = this.signedInClient();
    const org = await resolveOrg(client, this.org);
    this.orgName = org.name;
    const terminal = this.terminal;
    if (!(await this.confirm(org.name))) {
      terminal.note('Nothing was deleted.');
      return 1;
    }
    await client.deleteOrg(org.id);
    if (this.json) terminal.printJson({ id: org.id, name: org.name, deleted: true });
    else terminal.success(`Deleted organization ${terminal.err.bold(org.name)} and everything it owned`);
    return 0;
  }

  private async confirm(name: string): Promise<boolean> {
    if (this.yes) return true;
    const prompter = new Prompter(this.terminal);
    try {
      const answer = await prompter.ask(
        `This deletes ${this.terminal.err.bold(name)} with every vineyard, job, agent and state it owns. Type its name to confirm: `,
      );
      return answer === name;
    } finally {
      prompter.close();
    }
  }
}
