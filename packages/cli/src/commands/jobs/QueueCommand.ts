import { DEFAULT_PAGE_LIMIT, describeAgentPool, describePoolAgents, MAX_PAGE_LIMIT } from '@trellis/core';
import type { QueueEntryView } from '@trellis/client';
import { Command, Option } from 'clipanion';
import * as t from 'typanion';
import { duration } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { resolveOwnerFilter } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class QueueCommand extends TrellisCommand {
  static override paths = [['queue']];

  static override usage = Command.Usage({
    category: 'Jobs',
    description: 'Show the queued jobs in the order agents will claim them, and which agents can take each',
    details: `
      Each queued job with its position in its owner's queue (1 is what the owner's next claim takes: a person's jobs run on their own agents, an organization's on its pool), how long it has waited, its configuration and vineyard, the agents that can take it (with how many are idle and online now) and why it waits.

      Positions follow the claim itself: a DEPLOY of a plan keeps its plan's place, and the jobs of one configuration run one at a time in the order they were queued. Shows the first \`--limit\` jobs (default ${DEFAULT_PAGE_LIMIT}, at most ${MAX_PAGE_LIMIT}) and says how many are queued in all.
    `,
    examples: [
      ['The queue', '$0 queue'],
      ["An organization's queue", '$0 queue --org platform-team'],
      ['As JSON', '$0 queue --json'],
    ],
  });

  org = Option.String('--org', {
    description: 'Only the queue of this organization (name or id), or `personal` for only your own',
  });
  limit = Option.String('--limit', {
    description: `Jobs from the head of the queue, 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT})`,
    validator: t.cascade(t.isNumber(), [t.isInteger(), t.isInInclusiveRange(1, MAX_PAGE_LIMIT)]),
  });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const owner = await resolveOwnerFilter(client, this.org);
    const queue = await client.getQueue({ ...owner, ...(this.limit !== undefined ? { limit: this.limit } : {}) });
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(queue);
      return 0;
    }
    if (queue.jobs.length === 0) {
      terminal.note('No job is queued.');
      return 0;
    }
    const { out } = terminal;
    terminal.print(
      renderTable(
        ['POS', 'JOB', 'TYPE', 'CONFIG', 'VINEYARD', 'WAITED', 'AGENT POOL', 'AGENTS', 'WAITS FOR'],
        queue.jobs.map((entry) => [
          String(entry.position),
          entry.job.id,
          entry.job.job_type,
          entry.vine?.name ?? entry.job.config_snapshot?.target_worker?.name ?? '-',
          entry.vineyard?.name ?? '-',
          duration(entry.waited_seconds * 1000),
          describeAgentPool(entry.pool),
          describePoolAgents(entry.pool.agents),
          waitsFor(entry),
        ]),
        out.bold,
      ),
    );
    if (queue.total > queue.jobs.length) {
      terminal.note(`${queue.total} jobs are queued; the first ${queue.jobs.length} are shown (--limit).`);
    }
    return 0;
  }
}

/** Why the job waits, in a table cell: `trellis jobs show` and `--json` have the whole sentence. */
function waitsFor(entry: QueueEntryView): string {
  const waiting = entry.waiting_for;
  if (waiting === null) return 'an idle agent (next claim)';
  switch (waiting.reason) {
    case 'vine_busy':
      return `configuration busy (job ${waiting.job_id?.slice(0, 8) ?? '?'})`;
    case 'no_agent_online':
      return 'no agent online';
    case 'agents_busy':
      return 'agents busy';
    case 'approval':
      return 'approval';
    case 'offered':
      return "held for its plan's agent (seconds)";
  }
}
