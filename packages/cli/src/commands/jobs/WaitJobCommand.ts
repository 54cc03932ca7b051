import { isTerminalJobStatus } from '@trellis/core';
import { Command, Option } from 'clipanion';
import { EXIT_CODES_HELP } from '../../exitCodes.js';
import { exitCodeFor, followJob, reportEnd } from '../../follow/followJob.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { checkJobId } from './jobId.js';

export class WaitJobCommand extends TrellisCommand {
  static override paths = [['jobs', 'wait']];

  static override usage = Command.Usage({
    category: 'Jobs',
    description: 'Wait for a job to end; the exit code says how it ended',
    details: `
      Waits without printing the log (use \`trellis jobs logs ID --follow\` for that). Exit codes: ${EXIT_CODES_HELP.join('; ')}.
    `,
    examples: [['Deploy only if the plan succeeded', '$0 jobs wait $PLAN && $0 deploy web --plan $PLAN']],
  });

  id = Option.String({ name: 'id' });

  override async execute(): Promise<number> {
    const id = checkJobId(this.id);
    const client = this.signedInClient();
    let job = await client.getJob(id);
    if (!isTerminalJobStatus(job.status)) {
      job = await followJob(this.terminal, client, job, { logs: 'none', logTarget: 'stderr', offerCancel: false });
    }
    if (this.json) this.terminal.printJson(job);
    else reportEnd(this.terminal, job);
    return exitCodeFor(job.status);
  }
}
