import { isUuid } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ListNotificationsCommand extends TrellisCommand {
  static override paths = [['notifications', 'list'], ['notifications']];

  static override usage = Command.Usage({
    category: 'Notifications',
    description: "List your notifications and your organizations'",
    examples: [
      ['Everything you see', '$0 notifications list'],
      ["One organization's", '$0 notifications list --org 3f1e2d4c-5b6a-4789-9abc-def012345678'],
    ],
  });

  org = Option.String('--org', { description: 'An organization id, or `personal`' });

  override async execute(): Promise<number> {
    if (this.org !== undefined && this.org !== 'personal' && !isUuid(this.org)) {
      throw new UsageError(`--org is an organization id (a UUID) or "personal", got "${this.org}"`);
    }
    const notifications = await this.signedInClient().listNotifications(
      this.org !== undefined ? { orgId: this.org } : {},
    );
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(notifications);
      return 0;
    }
    if (notifications.length === 0) {
      terminal.note('No notifications; create one with `trellis notifications create`.');
      return 0;
    }
    terminal.print(
      renderTable(
        ['NAME', 'KIND', 'EVENTS', 'URL', 'CREATED', 'ID'],
        notifications.map((n) => [n.name, n.kind, n.events.join(','), n.url, timestamp(n.created_at), n.id]),
        terminal.out.bold,
      ),
    );
    return 0;
  }
}
