import { Command, Option, UsageError } from 'clipanion';
import { Prompter } from '../../output/Prompter.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { explainEditError } from './vineEditErrors.js';

export class DeleteConfigCommand extends TrellisCommand {
  static override paths = [['configs', 'delete']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: 'Delete a configuration',
    details: `
      A configuration that still manages resources is refused: run \`trellis destroy NAME\` first. \`--force\` deletes it anyway and leaves its resources running, unmanaged (in an organization: admins and owners). One with a queued or running job is refused until the job ends.

      Its jobs keep their history, and its state versions are kept for the server's retention period (\`TRELLIS_DELETED_VINE_RETENTION_DAYS\`, 30 days by default). Asks you to type the name first; \`--yes\` skips the question (needed when standard input is not a terminal).
    `,
    examples: [
      ['After destroying it', '$0 configs delete web'],
      ['From a script', '$0 configs delete web --yes'],
      ['Leave its resources running, unmanaged', '$0 configs delete web --force --yes'],
    ],
  });

  config = Option.String({ name: 'name-or-id' });
  force = Option.Boolean('--force', false, {
    description: 'Delete even though it manages resources (they stay, unmanaged)',
  });
  yes = Option.Boolean('-y,--yes', false, { description: 'Do not ask for confirmation' });

  override async execute(): Promise<number> {
    if (!this.yes && !this.terminal.interactive) {
      throw new UsageError('configs delete asks for confirmation: pass --yes when not at a terminal');
    }
    const client = this.signedInClient();
    const terminal = this.terminal;
    try {
      if (!this.yes) {
        const vine = await client.getConfiguration(this.config);
        const prompter = new Prompter(terminal);
        try {
          const answer = await prompter.ask(
            `This deletes configuration ${terminal.err.bold(vine.name)}${this.force ? ' and leaves its resources unmanaged' : ''}. Type its name to confirm: `,
          );
          if (answer !== vine.name) {
            terminal.note('Nothing was deleted.');
            return 1;
          }
        } finally {
          prompter.close();
        }
      }
      const deleted = await client.deleteConfiguration(this.config, { force: this.force });
      if (this.json) {
        terminal.printJson({ ...deleted, deleted: true });
        return 0;
      }
      terminal.success(`Deleted configuration ${terminal.err.bold(deleted.name)}`);
      terminal.print(
        deleted.state_kept_until
          ? `Its state versions are kept until ${deleted.state_kept_until}; its jobs keep their history.`
          : 'Its state versions are kept; its jobs keep their history.',
      );
      return 0;
    } catch (error) {
      throw explainEditError(error, this.config);
    }
  }
}
