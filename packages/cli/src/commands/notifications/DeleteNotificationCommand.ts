import { isUuid } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';

export class DeleteNotificationCommand extends TrellisCommand {
  static override paths = [['notifications', 'delete']];

  static override usage = Command.Usage({
    category: 'Notifications',
    description: 'Delete a notification and its deliveries',
    examples: [['Delete one', '$0 notifications delete 3f1e2d4c-5b6a-4789-9abc-def012345678']],
  });

  id = Option.String({ name: 'id' });

  override async execute(): Promise<number> {
    if (!isUuid(this.id)) throw new UsageError(`a notification id is a UUID, got "${this.id}"`);
    await this.signedInClient().deleteNotification(this.id);
    if (this.json) {
      this.terminal.printJson({ id: this.id, deleted: true });
      return 0;
    }
    this.terminal.success(`Deleted notification ${this.id}`);
    return 0;
  }
}
