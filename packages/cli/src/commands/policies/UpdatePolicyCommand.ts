import { isOneOf, isUuid, POLICY_ENFORCEMENTS } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';
import { readModule } from './readModule.js';

export class UpdatePolicyCommand extends TrellisCommand {
  static override paths = [['policies', 'update']];

  static override usage = Command.Usage({
    category: 'Policies',
    description: 'Change a policy: a new version (plans already checked keep theirs)',
    examples: [
      ['A new module', '$0 policies update 3f1e2d4c-5b6a-4789-9abc-def012345678 --file no-public-buckets.rego'],
      ['Make it advisory', '$0 policies update 3f1e2d4c-5b6a-4789-9abc-def012345678 --enforcement advisory'],
    ],
  });

  id = Option.String({ name: 'id' });
  file = Option.String('--file', { description: 'The new Rego module (`-`: stdin)' });
  enforcement = Option.String('--enforcement', { description: `${POLICY_ENFORCEMENTS.join(' or ')}` });
  name = Option.String('--name', { description: 'A new name' });

  protected override fieldFlags = { module: '--file' };

  override async execute(): Promise<number> {
    if (!isUuid(this.id)) throw new UsageError(`a policy id is a UUID, got "${this.id}"`);
    if (this.enforcement !== undefined && !isOneOf(POLICY_ENFORCEMENTS, this.enforcement)) {
      throw new UsageError(`--enforcement must be one of ${POLICY_ENFORCEMENTS.join(', ')}`);
    }
    if (this.file === undefined && this.enforcement === undefined && this.name === undefined) {
      throw new UsageError('give at least one of --file, --enforcement and --name');
    }
    const updated = await this.signedInClient().updatePolicy(this.id, {
      ...(this.file !== undefined ? { module: readModule(this.file) } : {}),
      ...(this.enforcement !== undefined && isOneOf(POLICY_ENFORCEMENTS, this.enforcement)
        ? { enforcement: this.enforcement }
        : {}),
      ...(this.name !== undefined ? { name: this.name } : {}),
    });
    if (this.json) {
      this.terminal.printJson(updated);
      return 0;
    }
    this.terminal.success(`Policy ${this.terminal.err.bold(updated.name)} is at version ${updated.version}`);
    return 0;
  }
}
