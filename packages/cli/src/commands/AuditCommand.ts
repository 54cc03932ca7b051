import { AUDIT_ACTIONS, DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '@trellis/core';
import type { AuditEntryView } from '@trellis/client';
import { Command, Option, UsageError } from 'clipanion';
import * as t from 'typanion';
import { timestamp } from '../output/format.js';
import { renderTable } from '../output/table.js';
import { resolveOwnerFilter } from '../resolve.js';
import { TrellisCommand } from './TrellisCommand.js';

export class AuditCommand extends TrellisCommand {
  static override paths = [['audit']];

  static override usage = Command.Usage({
    category: 'Audit',
    description: "Show your audit log, or an organization's, newest first, a page at a time",
    details:
      "Every change (sign-ins, vineyards, configurations, jobs, agents, tokens, organizations and members) is recorded with who made it, from which address and in which request. Without `--org` it shows your own log (an organization token: its organization's); an organization's log is for its admins and owners. When older entries remain, the command prints (on stderr) the `--cursor` that shows the next page; `--all` walks every page.",
    examples: [
      ['Your newest entries', '$0 audit'],
      ["An organization's cancelled jobs", '$0 audit --org platform-team --action job.cancel'],
      ['What one person did', '$0 audit --org platform-team --actor ada@example.com'],
      ['Everything about one record', '$0 audit --target 3f1e2d4c-5b6a-4789-9abc-def012345678'],
    ],
  });

  org = Option.String('--org', { description: "An organization's log (name or id; admins and owners)" });
  action = Option.String('--action', {
    description: `Only this action (${AUDIT_ACTIONS.join(', ')})`,
    validator: t.isEnum(AUDIT_ACTIONS),
  });
  actor = Option.String('--actor', { description: 'Only entries of this actor (email, or a user, token or agent id)' });
  target = Option.String('--target', { description: 'Only entries about this record (its id)' });
  limit = Option.String('--limit', {
    description: `Entries per page, 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT})`,
    validator: t.cascade(t.isNumber(), [t.isInteger(), t.isInInclusiveRange(1, MAX_PAGE_LIMIT)]),
  });
  cursor = Option.String('--cursor', { description: 'Start after the page that printed this cursor' });
  all = Option.Boolean('--all', false, { description: 'Every matching entry, page after page' });

  override async execute(): Promise<number> {
    if (this.org === 'personal') throw new UsageError('--org names an organization; without it you see your own log');
    const client = this.signedInClient();
    const owner = await resolveOwnerFilter(client, this.org);
    const query = {
      ...owner,
      ...(this.action ? { action: this.action } : {}),
      ...(this.actor !== undefined ? { actor: this.actor } : {}),
      ...(this.target !== undefined ? { target_id: this.target } : {}),
      ...(this.limit !== undefined ? { limit: this.limit } : {}),
      ...(this.cursor !== undefined ? { cursor: this.cursor } : {}),
    };
    const terminal = this.terminal;
    let entries: AuditEntryView[];
    if (this.all) {
      entries = [];
      for await (const entry of client.auditEntries(query)) entries.push(entry);
    } else {
      const page = await client.listAuditPage(query);
      entries = page.items;
      if (page.next_cursor !== null) {
        const again = [
          ...(this.org !== undefined ? ['--org', this.org] : []),
          ...(this.action ? ['--action', this.action] : []),
          ...(this.actor !== undefined ? ['--actor', this.actor] : []),
          ...(this.target !== undefined ? ['--target', this.target] : []),
          ...(this.limit !== undefined ? ['--limit', String(this.limit)] : []),
        ];
        terminal.note(`Older entries: trellis audit ${[...again, '--cursor', page.next_cursor].join(' ')}`);
      }
    }
    if (this.json) {
      terminal.printJson(entries);
      return 0;
    }
    if (entries.length === 0) {
      terminal.note('No audit entries.');
      return 0;
    }
    terminal.print(
      renderTable(
        ['WHEN', 'ACTOR', 'ACTION', 'TARGET', 'IP', 'REQUEST'],
        entries.map((entry) => [
          timestamp(entry.at),
          actorLabel(entry.actor),
          entry.action,
          `${entry.target.type} ${entry.target.id}`,
          entry.ip ?? '-',
          entry.request_id ?? '-',
        ]),
        terminal.out.bold,
      ),
    );
    return 0;
  }
}

function actorLabel(actor: AuditEntryView['actor']): string {
  switch (actor.type) {
    case 'user':
      return actor.email ?? actor.id ?? 'user';
    case 'token':
      return `token ${actor.id} (${actor.email ?? '?'})`;
    case 'worker':
      return `agent ${actor.id}`;
    case 'system':
      return 'system';
  }
}
