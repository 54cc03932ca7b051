import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';
import { checkJobId } from '../jobs/jobId.js';
import { describeApproval } from './planReview.js';

export class ApprovePlanCommand extends TrellisCommand {
  static override paths = [['approve']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: 'Approve a successful plan, so it may be deployed',
    details:
      'A configuration with an approval setting (`trellis configs set NAME --require-approval`) deploys only an approved plan. A plan is decided once (`plan_already_decided`); a plan made before the configuration changed cannot be approved (`plan_stale`); with `--separate-approver` the person who queued the plan cannot approve it (`separate_approver_required`). Operators and above, in an organization. Prints the plan job (`--json` too).',
    examples: [
      ['Approve a plan', '$0 approve 9d7e4c1a-5b2f-4e8a-a1c3-2f6b8d9e0a1b'],
      ['With a comment', '$0 approve 9d7e4c1a-5b2f-4e8a-a1c3-2f6b8d9e0a1b --comment "reviewed the diff"'],
    ],
  });

  id = Option.String({ name: 'plan-job' });
  comment = Option.String('--comment', { description: 'Why, for the record' });

  override async execute(): Promise<number> {
    const id = checkJobId(this.id);
    const job = await this.signedInClient().approvePlan(
      id,
      this.comment === undefined ? {} : { comment: this.comment },
    );
    if (this.json) this.terminal.printJson(job);
    else this.terminal.success(`Plan ${job.id} ${describeApproval(job)}`);
    return 0;
  }
}
