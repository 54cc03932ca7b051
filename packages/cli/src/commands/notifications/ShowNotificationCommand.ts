import { isUuid } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { vineyardName } from '../../output/vineyards.js';

export class ShowNotificationCommand extends TrellisCommand {
  static override paths = [['notifications', 'show']];

  static override usage = Command.Usage({
    category: 'Notifications',
    description: 'Show a notification (never its secret)',
    examples: [['Show one', '$0 notifications show 3f1e2d4c-5b6a-4789-9abc-def012345678']],
  });

  id = Option.String({ name: 'id' });

  override async execute(): Promise<number> {
    if (!isUuid(this.id)) throw new UsageError(`a notification id is a UUID, got "${this.id}"`);
    const client = this.signedInClient();
    const n = await client.getNotification(this.id);
    if (this.json) {
      this.terminal.printJson(n);
      return 0;
    }
    this.terminal.print(
      [
        `Name:      ${n.name}`,
        `Kind:      ${n.kind}`,
        `URL:       ${n.url}${n.url_masked ? ' (the rest is shown to admins only)' : ''}`,
        `Events:    ${n.events.join(', ')}`,
        `Vineyard:  ${(await vineyardName(client, n.vineyard_id)) ?? 'every vineyard'}`,
        `Owner:     ${n.org_id ? `organization ${n.org_id}` : 'you'}`,
        `Created:   ${timestamp(n.created_at)}`,
        `ID:        ${n.id}`,
      ].join('\n'),
    );
    return 0;
  }
}
