import { isUuid } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';

export class DeletePolicyCommand extends TrellisCommand {
  static override paths = [['policies', 'delete']];

  static override usage = Command.Usage({
    category: 'Policies',
    description: 'Delete a policy and its versions (checked plans keep their results)',
    examples: [['Delete one', '$0 policies delete 3f1e2d4c-5b6a-4789-9abc-def012345678']],
  });

  id = Option.String({ name: 'id' });

  override async execute(): Promise<number> {
    if (!isUuid(this.id)) throw new UsageError(`a policy id is a UUID, got "${this.id}"`);
    await this.signedInClient().deletePolicy(this.id);
    if (this.json) {
      this.terminal.printJson({ id: this.id, deleted: true });
      return 0;
    }
    this.terminal.success(`Deleted policy ${this.id}`);
    return 0;
  }
}
