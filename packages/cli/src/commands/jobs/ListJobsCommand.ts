import { DEFAULT_PAGE_LIMIT, JOB_STATUSES, MAX_PAGE_LIMIT } from '@trellis/core';
import type { JobSummaryView as JobSummary } from '@trellis/client';
import { Command, Option } from 'clipanion';
import * as t from 'typanion';
import { jobDuration, shortCommit, statusColour, timeAgo, triggerLabel } from '../../output/format.js';
import { ownerColumn } from '../../output/owners.js';
import { renderTable } from '../../output/table.js';
import { resolveOwnerFilter, resolveVineyard } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ListJobsCommand extends TrellisCommand {
  static override paths = [['jobs', 'list'], ['jobs']];

  static override usage = Command.Usage({
    category: 'Jobs',
    description: 'List your jobs and those of your organizations, newest first, a page at a time',
    details:
      'Shows the newest `--limit` jobs (default 50, at most 200). When older jobs remain, the command prints (on stderr) the `--cursor` that shows the next page; `--all` walks every page.',
    examples: [
      ['The newest jobs', '$0 jobs list'],
      ['Failed jobs of one vineyard', '$0 jobs list --status FAILED --vineyard production'],
      ['Jobs of one organization', '$0 jobs list --org platform-team'],
      ['The next (older) page', '$0 jobs list --cursor <cursor from the previous page>'],
      ['Ids of every queued job', "$0 jobs list --status QUEUED --all --json | jq -r '.[].id'"],
    ],
  });

  status = Option.String('--status', {
    description: `Only jobs in this status (${JOB_STATUSES.join(', ')})`,
    validator: t.isEnum(JOB_STATUSES),
  });
  vineyard = Option.String('--vineyard', { description: 'Only jobs of this vineyard (name or id)' });
  limit = Option.String('--limit', {
    description: `Jobs per page, 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT})`,
    validator: t.cascade(t.isNumber(), [t.isInteger(), t.isInInclusiveRange(1, MAX_PAGE_LIMIT)]),
  });
  org = Option.String('--org', {
    description: 'Only those of this organization (name or id), or `personal` for only your own',
  });
  cursor = Option.String('--cursor', { description: 'Start after the page that printed this cursor' });
  all = Option.Boolean('--all', false, { description: 'Every matching job, page after page' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const owner = await resolveOwnerFilter(client, this.org);
    const vineyardId =
      this.vineyard !== undefined ? (await resolveVineyard(client, this.vineyard, owner)).id : undefined;
    const query = {
      ...owner,
      ...(this.status ? { status: this.status } : {}),
      ...(vineyardId ? { vineyard_id: vineyardId } : {}),
      ...(this.limit !== undefined ? { limit: this.limit } : {}),
      ...(this.cursor !== undefined ? { cursor: this.cursor } : {}),
    };
    const terminal = this.terminal;
    let jobs: JobSummary[];
    if (this.all) {
      jobs = [];
      for await (const job of client.jobs(query)) jobs.push(job);
    } else {
      const page = await client.listJobsPage(query);
      jobs = page.items;
      if (page.next_cursor !== null) {
        const again = [
          ...(this.status ? ['--status', this.status] : []),
          ...(this.vineyard !== undefined ? ['--vineyard', this.vineyard] : []),
          ...(this.org !== undefined ? ['--org', this.org] : []),
          ...(this.limit !== undefined ? ['--limit', String(this.limit)] : []),
        ];
        terminal.note(`Older jobs: trellis jobs list ${[...again, '--cursor', page.next_cursor].join(' ')}`);
      }
    }
    if (this.json) {
      terminal.printJson(jobs);
      return 0;
    }
    if (jobs.length === 0) {
      terminal.note('No jobs.');
      return 0;
    }
    const { out } = terminal;
    const ownerOf = await ownerColumn(client, jobs, this.org !== undefined);
    terminal.print(
      renderTable(
        ['ID', 'TYPE', 'STATUS', 'CONFIG', 'TRIGGER', 'COMMIT', ...(ownerOf ? ['OWNER'] : []), 'CREATED', 'DURATION'],
        jobs.map((job) => [
          job.id,
          job.job_type,
          statusColour(out, job.status),
          job.config_snapshot?.vine?.name ?? job.config_snapshot?.target_worker?.name ?? '-',
          triggerLabel(job),
          shortCommit(job),
          ...(ownerOf ? [ownerOf(job)] : []),
          timeAgo(job.created_at),
          jobDuration(job),
        ]),
        out.bold,
      ),
    );
    return 0;
  }
}
