import { isUuid } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { vineyardName } from '../../output/vineyards.js';

export class ShowPolicyCommand extends TrellisCommand {
  static override paths = [['policies', 'show']];

  static override usage = Command.Usage({
    category: 'Policies',
    description: 'Show a policy: its module and its versions',
    examples: [
      ['Show one', '$0 policies show 3f1e2d4c-5b6a-4789-9abc-def012345678'],
      ['The module of version 1', '$0 policies show 3f1e2d4c-5b6a-4789-9abc-def012345678 --version 1'],
    ],
  });

  id = Option.String({ name: 'id' });
  version = Option.String('--version', { description: 'Print the module of this version only' });

  override async execute(): Promise<number> {
    if (!isUuid(this.id)) throw new UsageError(`a policy id is a UUID, got "${this.id}"`);
    const client = this.signedInClient();
    const policy = await client.getPolicy(this.id);
    if (this.version !== undefined) {
      const wanted = policy.versions.find((v) => String(v.version) === this.version);
      if (!wanted) throw new UsageError(`policy ${policy.name} has no version ${this.version}`);
      if (this.json) this.terminal.printJson(wanted);
      else this.terminal.print(wanted.module.replace(/\n$/, ''));
      return 0;
    }
    if (this.json) {
      this.terminal.printJson(policy);
      return 0;
    }
    this.terminal.print(
      [
        `Name:         ${policy.name}`,
        `Enforcement:  ${policy.enforcement}`,
        `Version:      ${policy.version}`,
        `Vineyard:     ${(await vineyardName(client, policy.vineyard_id)) ?? 'every vineyard'}`,
        `Owner:        ${policy.org_id ? `organization ${policy.org_id}` : 'you'}`,
        `Created:      ${timestamp(policy.created_at)}`,
        `Updated:      ${timestamp(policy.updated_at)}`,
        `ID:           ${policy.id}`,
        `Versions:     ${policy.versions.map((v) => `v${v.version} ${v.enforcement} ${timestamp(v.created_at)}`).join('; ')}`,
        '',
        policy.module.replace(/\n$/, ''),
      ].join('\n'),
    );
    return 0;
  }
}
