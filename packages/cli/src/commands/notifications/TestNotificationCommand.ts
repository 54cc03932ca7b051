import { isUuid } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';

export class TestNotificationCommand extends TrellisCommand {
  static override paths = [['notifications', 'test']];

  static override usage = Command.Usage({
    category: 'Notifications',
    description: 'Send a test delivery now and show how the receiver answered',
    details: 'Exits 1 when the receiver did not answer with a 2xx (a retryable failure is retried later).',
    examples: [['Test one', '$0 notifications test 3f1e2d4c-5b6a-4789-9abc-def012345678']],
  });

  id = Option.String({ name: 'id' });

  override async execute(): Promise<number> {
    if (!isUuid(this.id)) throw new UsageError(`a notification id is a UUID, got "${this.id}"`);
    const delivery = await this.signedInClient().testNotification(this.id);
    const ok = delivery.status === 'delivered';
    if (this.json) {
      this.terminal.printJson(delivery);
      return ok ? 0 : 1;
    }
    const attempt = delivery.attempts[delivery.attempts.length - 1];
    const answer = attempt?.status_code != null ? `HTTP ${attempt.status_code}` : (attempt?.error ?? 'no answer');
    if (ok) this.terminal.success(`Delivered ${delivery.id}: ${answer}`);
    else this.terminal.warn(`Not delivered (${delivery.status}) ${delivery.id}: ${attempt?.error ?? answer}`);
    return ok ? 0 : 1;
  }
}
