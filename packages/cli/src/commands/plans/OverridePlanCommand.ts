import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';
import { checkJobId } from '../jobs/jobId.js';
import { describeOverride } from './planReview.js';

export class OverridePlanCommand extends TrellisCommand {
  static override paths = [['override']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: "Override a plan's failed mandatory policies, so it may be deployed",
    details:
      'Only a plan that failed a mandatory policy has anything to override (`no_failed_policies`); once (`plan_already_overridden`). Admins and owners in an organization; the owner of a personal plan. The reason is kept on the plan and in the audit log. Prints the plan job (`--json` too).',
    examples: [
      [
        'Override a plan',
        '$0 override 9d7e4c1a-5b2f-4e8a-a1c3-2f6b8d9e0a1b --reason "the logs bucket is public by design"',
      ],
    ],
  });

  id = Option.String({ name: 'plan-job' });
  reason = Option.String('--reason', { required: true, description: 'Why the failed policies may be ignored' });

  override async execute(): Promise<number> {
    const id = checkJobId(this.id);
    const job = await this.signedInClient().overridePlan(id, { reason: this.reason });
    if (this.json) this.terminal.printJson(job);
    else this.terminal.success(`Plan ${job.id} overridden ${describeOverride(job)}`);
    return 0;
  }
}
