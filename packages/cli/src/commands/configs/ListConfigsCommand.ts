import { FLEET_DRIFT, PLAN_POLICY_RESULTS, VINE_STATUSES } from '@trellis/core';
import type { FleetCountsView, FleetListFilter } from '@trellis/client';
import { Command, Option } from 'clipanion';
import * as t from 'typanion';
import { describeSource, driftBadge, statusColour, timeAgo } from '../../output/format.js';
import { ownerColumn } from '../../output/owners.js';
import { renderTable } from '../../output/table.js';
import { resolveOwnerFilter } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ListConfigsCommand extends TrellisCommand {
  static override paths = [['configs', 'list'], ['configs']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: 'List your vine configurations and those of your organizations (the fleet)',
    details:
      'Filters by status, drift, the policy result of the latest plan, a tag and when a configuration last changed; `--counts` prints how many stand each way instead (each dimension counted under the other filters). Sensitive variable values are never shown (the server does not return them).',
    examples: [
      ['List configurations', '$0 configs list'],
      ['Only your own', '$0 configs list --org personal'],
      ['Drifted ones tagged prod', '$0 configs list --drift drifted --tag prod'],
      ['Failed policies, changed this year', '$0 configs list --policy failed --changed-since 2026-01-01'],
      ['How many stand each way', '$0 configs list --counts'],
      ['The failed ones, for a script', '$0 configs list --json | jq -r \'.[] | select(.status == "FAILED") | .name\''],
    ],
  });

  org = Option.String('--org', {
    description: 'Only those of this organization (name or id), or `personal` for only your own',
  });

  status = Option.String('--status', {
    description: `Only configurations in this status (${VINE_STATUSES.join(', ')})`,
    validator: t.isEnum(VINE_STATUSES),
  });
  drift = Option.String('--drift', {
    description: `Only those whose drift is ${FLEET_DRIFT.join(', ')}`,
    validator: t.isEnum(FLEET_DRIFT),
  });
  policy = Option.String('--policy', {
    description: `Only those whose latest plan's policies ${PLAN_POLICY_RESULTS.join(', ')}`,
    validator: t.isEnum(PLAN_POLICY_RESULTS),
  });
  tag = Option.String('--tag', { description: 'Only those carrying this tag' });
  changedSince = Option.String('--changed-since', {
    description: 'Only those last changed at or after this date (YYYY-MM-DD) or time (ISO 8601)',
  });
  changedBefore = Option.String('--changed-before', {
    description: 'Only those last changed before this date (YYYY-MM-DD) or time (ISO 8601)',
  });
  counts = Option.Boolean('--counts', false, {
    description: 'Print how many configurations stand each way (status, drift, policy) instead of the list',
  });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const owner = await resolveOwnerFilter(client, this.org);
    const filter: FleetListFilter = {
      ...(this.status ? { status: this.status } : {}),
      ...(this.drift ? { drift: this.drift } : {}),
      ...(this.policy ? { policy: this.policy } : {}),
      ...(this.tag !== undefined ? { tag: this.tag } : {}),
      ...(this.changedSince !== undefined ? { changed_since: this.changedSince } : {}),
      ...(this.changedBefore !== undefined ? { changed_before: this.changedBefore } : {}),
    };
    const terminal = this.terminal;
    if (this.counts) {
      const counts = await client.configurationCounts({ ...owner, ...filter });
      if (this.json) terminal.printJson(counts);
      else terminal.print(countLines(counts));
      return 0;
    }
    const configurations = await client.listConfigurations({ ...owner, ...filter });
    if (this.json) {
      terminal.printJson(configurations);
      return 0;
    }
    if (configurations.length === 0) {
      terminal.note(
        Object.keys(filter).length > 0
          ? 'No configurations match.'
          : 'No configurations yet; create one with `trellis configs create`.',
      );
      return 0;
    }
    const { out } = terminal;
    const ownerOf = await ownerColumn(client, configurations, this.org !== undefined);
    terminal.print(
      renderTable(
        [
          'NAME',
          'PROJECT',
          'VINEYARD',
          ...(ownerOf ? ['OWNER'] : []),
          'STATUS',
          'DRIFT',
          'POLICY',
          'TAGS',
          'ENGINE',
          'SOURCE',
          'UPDATED',
        ],
        configurations.map((vine) => [
          vine.name,
          vine.project_name,
          vine.vineyard_name ?? vine.vineyard_id,
          ...(ownerOf ? [ownerOf(vine)] : []),
          statusColour(out, vine.status),
          driftBadge(out, vine.drift?.status),
          vine.policy === 'none' ? '-' : vine.policy,
          vine.tags.length > 0 ? vine.tags.join(',') : '-',
          vine.engine.version ? `${vine.engine.name} ${vine.engine.version}` : vine.engine.name,
          describeSource(vine.source),
          timeAgo(vine.updated_at),
        ]),
        out.bold,
      ),
    );
    return 0;
  }
}

/** The counts for people: the total, then one line per dimension. */
function countLines(counts: FleetCountsView): string {
  const line = (name: string, byValue: Record<string, number>) =>
    `${name}: ${Object.entries(byValue)
      .map(([value, n]) => `${value} ${n}`)
      .join(', ')}`;
  return [
    `total: ${counts.total}`,
    line('status', counts.status),
    line('drift', counts.drift),
    line('policy', counts.policy),
  ].join('\n');
}
