import { isUuid } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';

export class RevokeTokenCommand extends TrellisCommand {
  static override paths = [['tokens', 'revoke']];

  static override usage = Command.Usage({
    category: 'API tokens',
    description: 'Revoke an API token: it stops working at once',
    details: "Its creator may revoke a token; an organization's admins may revoke any of its tokens.",
    examples: [['Revoke a token', '$0 tokens revoke 3f1e2d4c-5b6a-4789-9abc-def012345678']],
  });

  id = Option.String({ name: 'id' });

  override async execute(): Promise<number> {
    if (!isUuid(this.id)) throw new UsageError(`a token id is a UUID, got "${this.id}"`);
    await this.signedInClient().revokeToken(this.id);
    if (this.json) {
      this.terminal.printJson({ id: this.id, revoked: true });
      return 0;
    }
    this.terminal.success(`Revoked token ${this.id}`);
    return 0;
  }
}
