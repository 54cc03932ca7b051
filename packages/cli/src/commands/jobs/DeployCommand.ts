import type { CreateJobInput } from '@trellis/client';
import { isUuid } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { EXIT_CODES_HELP } from '../../exitCodes.js';
import { JobRunCommand } from './JobRunCommand.js';

export class DeployCommand extends JobRunCommand {
  static override paths = [['deploy']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: 'Deploy a configuration: queue a DEPLOY job and follow its log',
    details: `
      Without \`--plan\` the agent plans and applies in one go. With \`--plan JOB\` it applies exactly that plan, which must be a successful PLAN job of the same configuration, not applied before, made from the configuration as it is now (else the server refuses: \`plan_stale\`, \`plan_already_applied\`, \`plan_not_ready\`).

      A configuration with mandatory policies or a required approval deploys only a plan (without \`--plan\` the server refuses: \`plan_required\`), and only a plan whose agent reported a result of every policy it was given (else \`policy_unchecked\`: plan again).

      Following, Ctrl-C, \`--detach\` and \`--json\` work as for \`trellis plan\`. Exit codes: ${EXIT_CODES_HELP.join('; ')}.
    `,
    examples: [
      ['Plan and apply', '$0 deploy web'],
      ['Apply a reviewed plan', '$0 deploy web --plan 9d7e4c1a-5b2f-4e8a-a1c3-2f6b8d9e0a1b'],
    ],
  });

  plan = Option.String('--plan', { description: 'Apply this successful PLAN job instead of planning again' });

  protected override validate(): void {
    if (this.plan !== undefined && !isUuid(this.plan)) {
      throw new UsageError(`--plan must be a job id (UUID), got "${this.plan}"`);
    }
    this.errorContext.planJobId = this.plan;
  }

  protected override async jobInput(configurationId: string): Promise<CreateJobInput> {
    return { job_type: 'DEPLOY', configuration_id: configurationId, ...(this.plan ? { plan_job_id: this.plan } : {}) };
  }
}
