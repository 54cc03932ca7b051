import type { CreateJobInput } from '@trellis/client';
import { isUuid } from '@trellis/core';
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

      Without \`--plan\` the agent plans the destruction, checks the configuration's policies on that plan (a failed mandatory policy stops it before anything is destroyed), then destroys. A configuration that requires approval destroys only an approved destroy plan: \`trellis plan CONFIG --destroy\`, \`trellis approve JOB\`, then \`trellis destroy CONFIG --plan JOB\` (else the server refuses: \`plan_required\`).

      Following, Ctrl-C, \`--detach\` and \`--json\` work as for \`trellis plan\`. Exit codes: ${EXIT_CODES_HELP.join('; ')}.
    `,
    examples: [
      ['Destroy, after confirming', '$0 destroy web'],
      ['From a script', '$0 destroy web --yes'],
      ['Apply an approved destroy plan', '$0 destroy web --plan 9d7e4c1a-5b2f-4e8a-a1c3-2f6b8d9e0a1b'],
    ],
  });

  yes = Option.Boolean('-y,--yes', false, { description: 'Do not ask for confirmation' });
  plan = Option.String('--plan', { description: 'Apply this approved destroy plan (trellis plan CONFIG --destroy)' });

  protected override validate(): void {
    if (this.plan !== undefined && !isUuid(this.plan)) {
      throw new UsageError(`--plan must be a job id (UUID), got "${this.plan}"`);
    }
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
    return { job_type: 'DESTROY', configuration_id: configurationId, ...(this.plan ? { plan_job_id: this.plan } : {}) };
  }
}
