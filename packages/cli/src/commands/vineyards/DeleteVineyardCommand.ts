import { TrellisApiError } from '@trellis/client';
import { Command, Option } from 'clipanion';
import { CliError } from '../../errors.js';
import { resolveVineyard } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class DeleteVineyardCommand extends TrellisCommand {
  static override paths = [['vineyards', 'delete']];

  static override usage = Command.Usage({
    category: 'Vineyards',
    description: 'Delete an empty vineyard',
    details:
      'A vineyard that still holds configurations is refused: delete them first (`trellis configs delete NAME`). In an organization: admins and owners.',
    examples: [['Delete one', '$0 vineyards delete staging']],
  });

  vineyard = Option.String({ name: 'name-or-id' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const vineyard = await resolveVineyard(client, this.vineyard);
    try {
      await client.deleteVineyard(vineyard.id);
    } catch (error) {
      if (error instanceof TrellisApiError && error.code === 'vineyard_not_empty') {
        throw new CliError(
          `${error.detail.replace(/: delete them first$/, '')}: delete them first with \`trellis configs delete NAME\` [${error.code}]`,
        );
      }
      throw error;
    }
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson({ id: vineyard.id, name: vineyard.name, deleted: true });
      return 0;
    }
    terminal.success(`Deleted vineyard ${terminal.err.bold(vineyard.name)}`);
    return 0;
  }
}
