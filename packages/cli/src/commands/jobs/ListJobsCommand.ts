import { JOB_STATUSES } from '@trellis/core';
import { Command, Option } from 'clipanion';
import * as t from 'typanion';
import { jobDuration, statusColour, timeAgo } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { resolveVineyard } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ListJobsCommand extends TrellisCommand {
  static override paths = [['jobs', 'list'], ['jobs']];

  static override usage = Command.Usage({
    category: 'Jobs',
    description: 'List your jobs, newest first',
    examples: [
      ['Every job', '$0 jobs list'],
      ['Failed jobs of one vineyard', '$0 jobs list --status FAILED --vineyard production'],
      ['Ids of the queued jobs', "$0 jobs list --status QUEUED --json | jq -r '.[].id'"],
    ],
  });

  status = Option.String('--status', {
    description: `Only jobs in this status (${JOB_STATUSES.join(', ')})`,
    validator: t.isEnum(JOB_STATUSES),
  });
  vineyard = Option.String('--vineyard', { description: 'Only jobs of this vineyard (name or id)' });
  limit = Option.String('--limit', {
    description: 'Show at most this many jobs (default: all)',
    validator: t.isNumber(),
  });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const vineyardId = this.vineyard !== undefined ? (await resolveVineyard(client, this.vineyard)).id : undefined;
    let jobs = await client.listJobs({
      ...(this.status ? { status: this.status } : {}),
      ...(vineyardId ? { vineyard_id: vineyardId } : {}),
    });
    if (this.limit !== undefined) jobs = jobs.slice(0, Math.max(0, this.limit));
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(jobs);
      return 0;
    }
    if (jobs.length === 0) {
      terminal.note('No jobs.');
      return 0;
    }
    const { out } = terminal;
    terminal.print(
      renderTable(
        ['ID', 'TYPE', 'STATUS', 'CONFIG', 'CREATED', 'DURATION'],
        jobs.map((job) => [
          job.id,
          job.job_type,
          statusColour(out, job.status),
          job.config_snapshot?.vine?.name ?? job.config_snapshot?.target_worker?.name ?? '-',
          timeAgo(job.created_at),
          jobDuration(job),
        ]),
        out.bold,
      ),
    );
    return 0;
  }
}
