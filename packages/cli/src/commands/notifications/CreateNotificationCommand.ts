import { isOneOf, isUuid, NOTIFICATION_EVENTS, NOTIFICATION_KINDS } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';

export class CreateNotificationCommand extends TrellisCommand {
  static override paths = [['notifications', 'create']];

  static override usage = Command.Usage({
    category: 'Notifications',
    description: 'Create a webhook or Slack notification and print a webhook secret once',
    details: `
      A webhook receives signed JSON (\`X-Trellis-Signature: sha256=<HMAC of the body>\`); its signing secret is printed alone on stdout this once. A Slack notification posts to a Slack incoming-webhook URL.

      Events: ${NOTIFICATION_EVENTS.join(', ')} (repeat \`--event\`). The URL must be https:// and reach no private address. With \`--org\` the notification is the organization's (admins).
    `,
    examples: [
      [
        'A webhook for failed jobs',
        '$0 notifications create --name ops --kind webhook --url https://hooks.example.com/trellis --event job.failed',
      ],
    ],
  });

  name = Option.String('--name', { required: true, description: 'Name of the notification' });
  kind = Option.String('--kind', { required: true, description: `${NOTIFICATION_KINDS.join(' or ')}` });
  url = Option.String('--url', { required: true, description: 'https:// URL to POST to' });
  events = Option.Array('--event', { required: true, description: 'An event to send (repeatable)' });
  vineyard = Option.String('--vineyard', { description: "Only this vineyard's events (its id)" });
  org = Option.String('--org', { description: 'Id of the organization that owns the notification' });

  override async execute(): Promise<number> {
    if (!isOneOf(NOTIFICATION_KINDS, this.kind)) {
      throw new UsageError(`--kind must be one of ${NOTIFICATION_KINDS.join(', ')}`);
    }
    for (const event of this.events) {
      if (!isOneOf(NOTIFICATION_EVENTS, event)) {
        throw new UsageError(`--event must be one of ${NOTIFICATION_EVENTS.join(', ')}, got "${event}"`);
      }
    }
    if (this.org !== undefined && !isUuid(this.org)) throw new UsageError('--org is an organization id (a UUID)');
    if (this.vineyard !== undefined && !isUuid(this.vineyard))
      throw new UsageError('--vineyard is a vineyard id (a UUID)');
    const created = await this.signedInClient().createNotification({
      name: this.name,
      kind: this.kind,
      url: this.url,
      events: this.events.filter((event) => isOneOf(NOTIFICATION_EVENTS, event)),
      ...(this.vineyard !== undefined ? { vineyard_id: this.vineyard } : {}),
      ...(this.org !== undefined ? { org_id: this.org } : {}),
    });
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(created);
      return 0;
    }
    terminal.success(`Created ${created.kind} notification ${terminal.err.bold(created.name)} ${created.id}`);
    if (created.secret !== null) {
      terminal.warn('The signing secret is shown only once: store it now.');
      terminal.print(created.secret);
    }
    return 0;
  }
}
