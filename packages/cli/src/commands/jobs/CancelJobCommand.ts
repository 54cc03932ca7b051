import { Command, Option } from 'clipanion';
import { statusColour } from '../../output/format.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { checkJobId } from './jobId.js';

export class CancelJobCommand extends TrellisCommand {
  static override paths = [['jobs', 'cancel']];

  static override usage = Command.Usage({
    category: 'Jobs',
    description: 'Cancel a QUEUED or PROCESSING job',
    details:
      'A running job is marked CANCELLED at once; its agent interrupts the engine and gives it time to release the state lock. A finished job cannot be cancelled (`invalid_transition`).',
    examples: [['Cancel a job', '$0 jobs cancel 9d7e4c1a-5b2f-4e8a-a1c3-2f6b8d9e0a1b']],
  });

  id = Option.String({ name: 'id' });

  override async execute(): Promise<number> {
    const id = checkJobId(this.id);
    const job = await this.signedInClient().cancelJob(id);
    const terminal = this.terminal;
    if (this.json) terminal.printJson(job);
    else terminal.success(`Job ${job.id} is ${statusColour(terminal.err, job.status)}`);
    return 0;
  }
}
