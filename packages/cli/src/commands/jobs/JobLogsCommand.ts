import type { LogEntryView as LogChunk } from '@trellis/client';
import { Command, Option } from 'clipanion';
import { followJob } from '../../follow/followJob.js';
import { LogPrinter } from '../../follow/LogPrinter.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { checkJobId } from './jobId.js';

export class JobLogsCommand extends TrellisCommand {
  static override paths = [['jobs', 'logs']];

  static override usage = Command.Usage({
    category: 'Jobs',
    description: 'Print the log of a job',
    details: `
      Prints the log stored so far; \`--follow\` keeps printing until the job ends (Ctrl-C stops following and leaves the job running; exit code 0). With \`--json\` the chunks are printed as a JSON array, or with \`--follow\` as one JSON object per line.
    `,
    examples: [
      ['The log so far', '$0 jobs logs 9d7e4c1a-5b2f-4e8a-a1c3-2f6b8d9e0a1b'],
      ['Follow a running job', '$0 jobs logs 9d7e4c1a-5b2f-4e8a-a1c3-2f6b8d9e0a1b --follow'],
    ],
  });

  id = Option.String({ name: 'id' });
  follow = Option.Boolean('-f,--follow', false, { description: 'Keep printing new lines until the job ends' });

  override async execute(): Promise<number> {
    const id = checkJobId(this.id);
    const client = this.signedInClient();
    const terminal = this.terminal;
    if (this.follow) {
      const job = await client.getJob(id);
      await followJob(terminal, client, job, {
        logs: this.json ? 'ndjson' : 'text',
        logTarget: 'stdout',
        offerCancel: false,
      });
      return 0;
    }
    const chunks: LogChunk[] = [];
    const printer = new LogPrinter(terminal.context.stdout, terminal.out);
    let after = 0;
    for (;;) {
      const page = await client.getJobLogs(id, { after, limit: 1000 });
      for (const chunk of page.logs) {
        if (this.json) chunks.push(chunk);
        else printer.write(chunk);
        after = chunk.id;
      }
      if (!page.has_more || page.logs.length === 0) break;
    }
    printer.finish();
    if (this.json) terminal.printJson(chunks);
    return 0;
  }
}
