import type { CreateJobInput } from '@trellis/client';
import { Command, Option, UsageError } from 'clipanion';
import { EXIT_CODES_HELP } from '../../exitCodes.js';
import { Prompter } from '../../output/Prompter.js';
import { JobRunCommand } from './JobRunCommand.js';

export class DestroyCommand extends JobRunCommand {
  static override paths = [['destroy']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: 'Destroy what a configuration deployed: queue a DESTROY job and follow its log',
    details: `
      Asks you to type the configuration name first; \`--yes\` skips the question (needed when standard input is not a terminal).

      Following, Ctrl-C, \`--detach\` and \`--json\` work as for \`trellis plan\`. Exit codes: ${EXIT_CODES_HELP.join('; ')}.
    `,
    examples: [
      ['Destroy, after confirming', '$0 destroy web'],
      ['From a script', '$0 destroy web --yes'],
    ],
  });

  yes = Option.Boolean('-y,--yes', false, { description: 'Do not ask for confirmation' });

  protected override validate(): void {
    if (!this.yes && !this.terminal.interactive) {
      throw new UsageError('destroy asks for confirmation: pass --yes when not at a terminal');
    }
  }

  protected override async confirm(config: { name: string }): Promise<boolean> {
    if (this.yes) return true;
    const prompter = new Prompter(this.terminal);
    try {
      const answer = await prompter.ask(
        `This destroys every resource of ${this.terminal.err.bold(config.name)}. Type its name to confirm: `,
      );
      return answer === config.name;
    } finally {
      prompter.close();
    }
  }

  protected override async jobInput(configurationId: string): Promise<CreateJobInput> {
    return { job_type: 'DESTROY', configuration_id: configurationId };
  }
}
