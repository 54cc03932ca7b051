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

      Run options narrow the plan as the engine's own flags do: \`--target ADDR\` and \`--replace ADDR\` (each may be repeated, at most 100 addresses each), \`--refresh-only\` (only update the state to match the infrastructure) and \`--no-refresh\` (plan without refreshing). A deploy of such a plan (\`trellis deploy CONFIG --plan JOB\`) applies exactly what was planned.

      Exit codes: ${EXIT_CODES_HELP.join('; ')}.
    `,
    examples: [
      ['Plan and follow', '$0 plan web'],
      [
        'Queue and deploy that plan later',
        'JOB=$($0 plan web --detach) && $0 jobs wait $JOB && $0 deploy web --plan $JOB',
      ],
      ['Plan the destruction, to have it approved', '$0 plan web --destroy'],
      [
        'Plan one resource and the replacement of another',
        "$0 plan web --target 'aws_s3_bucket.logs' --replace 'aws_instance.web'",
      ],
      ['Only update the state to match the infrastructure', '$0 plan web --refresh-only'],
    ],
  });

  destroy = Option.Boolean('--destroy', false, {
    description: 'Plan the destruction of what the configuration deployed (a destroy plan)',
  });

  target = Option.Array('--target', {
    description: 'Plan only this resource address (and what it depends on); repeat for more',
  });

  replace = Option.Array('--replace', {
    description: 'Plan the replacement of this resource address; repeat for more',
  });

  refreshOnly = Option.Boolean('--refresh-only', false, {
    description: 'Plan only to update the state to match the infrastructure',
  });

  refresh = Option.Boolean('--refresh', true, {
    description: 'Refresh the state first (`--no-refresh`: plan without refreshing)',
  });

  protected override async jobInput(configurationId: string): Promise<CreateJobInput> {
    const runOptions: NonNullable<CreateJobInput['run_options']> = {
      ...(this.target?.length ? { target: this.target } : {}),
      ...(this.replace?.length ? { replace: this.replace } : {}),
      ...(this.refreshOnly ? { refresh_only: true as const } : {}),
      ...(this.refresh ? {} : { refresh: false as const }),
    };
    return {
      job_type: 'PLAN',
      configuration_id: configurationId,
      ...(this.destroy ? { destroy: true } : {}),
      ...(Object.keys(runOptions).length > 0 ? { run_options: runOptions } : {}),
    };
  }
}
