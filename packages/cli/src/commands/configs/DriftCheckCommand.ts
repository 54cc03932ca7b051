import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';

export class DriftCheckCommand extends TrellisCommand {
  static override paths = [['configs', 'drift-check']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: 'Check a deployed configuration for drift now',
    details:
      'Queues a drift check: a plan that is never deployed, on a DEPLOYED configuration with no queued or running job. Its result shows in `trellis configs show` once it finishes (`trellis jobs wait ID`).',
    examples: [['Check now', '$0 configs drift-check web']],
  });

  config = Option.String({ name: 'name-or-id', required: true });

  override async execute(): Promise<number> {
    const job = await this.signedInClient().checkDrift(this.config);
    if (this.json) this.terminal.printJson(job);
    else this.terminal.print(`Drift check queued: job ${job.id}`);
    return 0;
  }
}
