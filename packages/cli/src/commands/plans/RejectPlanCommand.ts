import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';
import { checkJobId } from '../jobs/jobId.js';
import { describeApproval } from './planReview.js';

export class RejectPlanCommand extends TrellisCommand {
  static override paths = [['reject']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: "Reject a plan, which ends that plan's path to deploy",
    details:
      'A DEPLOY of a rejected plan is refused (`plan_rejected`); plan again. A plan is decided once (`plan_already_decided`). Operators and above, in an organization. Prints the plan job (`--json` too).',
    examples: [['Reject a plan', '$0 reject 9d7e4c1a-5b2f-4e8a-a1c3-2f6b8d9e0a1b --comment "wrong region"']],
  });

  id = Option.String({ name: 'plan-job' });
  comment = Option.String('--comment', { required: true, description: 'Why the plan is rejected' });

  override async execute(): Promise<number> {
    const id = checkJobId(this.id);
    const job = await this.signedInClient().rejectPlan(id, { comment: this.comment });
    if (this.json) this.terminal.printJson(job);
    else this.terminal.success(`Plan ${job.id} ${describeApproval(job)}`);
    return 0;
  }
}
