import type { CreateJobInput } from '@trellis/client';
import { Command, Option } from 'clipanion';
import { EXIT_CODES_HELP } from '../../exitCodes.js';
import { JobRunCommand } from './JobRunCommand.js';

export class PlanCommand extends JobRunCommand {
  static override paths = [['plan']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: 'Plan a configuration: queue a PLAN job and follow its log',
    details: `
      Queues a PLAN job for the configuration (by name or id) and follows its log live until it ends, with a spinner while it waits for an agent. Lines the engine wrote to stderr are red (\`stderr| \` without colour); the agent's own lines are dimmed (\`system| \`).

      Ctrl-C at a terminal offers to cancel the job; elsewhere it stops following and the job goes on. \`--detach\` prints the job id and returns at once. With \`--json\` the log goes to stderr and the finished job is printed as JSON.

      With \`--destroy\` the plan is of the destruction (a destroy plan): nothing is destroyed until \`trellis destroy CONFIG --plan JOB\` applies it, which a configuration that requires approval needs (its policies are checked on it too).

      Exit codes: ${EXIT_CODES_HELP.join('; ')}.
    `,
    examples: [
      ['Plan and follow', '$0 plan web'],
      [
        'Queue and deploy that plan later',
        'JOB=$($0 plan web --detach) && $0 jobs wait $JOB && $0 deploy web --plan $JOB',
      ],
      ['Plan the destruction, to have it approved', '$0 plan web --destroy'],
    ],
  });

  destroy = Option.Boolean('--destroy', false, {
    description: 'Plan the destruction of what the configuration deployed (a destroy plan)',
  });

  protected override async jobInput(configurationId: string): Promise<CreateJobInput> {
    return { job_type: 'PLAN', configuration_id: configurationId, ...(this.destroy ? { destroy: true } : {}) };
  }
}
