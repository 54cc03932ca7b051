import { Command, Option } from 'clipanion';
import { renderPlanChanges } from '../../output/planChanges.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { checkJobId } from './jobId.js';

export class PlanChangesCommand extends TrellisCommand {
  static override paths = [['jobs', 'changes']];

  static override usage = Command.Usage({
    category: 'Jobs',
    description: "Show a plan's changes: resources by module with their attribute diffs, and outputs",
    details:
      "The change document the agent derived from the engine's plan: each resource the plan creates (`+`), updates (`~`), replaces (`-/+`, or `+/-` when it creates first) or destroys (`-`), grouped by module, with the attributes that change; then the outputs. Values the plan marks sensitive never left the agent and read `(sensitive)`; values known only after apply read `(known after apply)`. A very large plan is cut at the size limit, which the output says. A job that is not a successful PLAN, or was planned by an older agent, has none (`plan_changes_not_found`). `--json` prints the document.",
    examples: [
      ['Review a plan before approving it', '$0 jobs changes 9d7e4c1a-5b2f-4e8a-a1c3-2f6b8d9e0a1b'],
      ['The document, for a script', '$0 jobs changes 9d7e4c1a-5b2f-4e8a-a1c3-2f6b8d9e0a1b --json'],
    ],
  });

  id = Option.String({ name: 'plan-job' });

  override async execute(): Promise<number> {
    const id = checkJobId(this.id);
    const document = await this.signedInClient().getPlanChanges(id);
    if (this.json) {
      this.terminal.printJson(document);
      return 0;
    }
    this.terminal.print(renderPlanChanges(document, this.terminal.out));
    return 0;
  }
}
