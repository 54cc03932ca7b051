import { Command, Option } from 'clipanion';
import { CliError } from '../../errors.js';
import { resolveOrg } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class LeaveOrgCommand extends TrellisCommand {
  static override paths = [['orgs', 'members', 'leave']];

  static override usage = Command.Usage({
    category: 'Organizations',
    description: 'Leave an organization (remove your own membership)',
    details:
      'Any member may leave; you lose access to its records at once. The last owner cannot leave (`last_owner`): make another owner first. With `--json`: your membership as it was.',
    examples: [['Leave', '$0 orgs members leave platform-team']],
  });

  org = Option.String({ name: 'org' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const org = await resolveOrg(client, this.org);
    this.orgName = org.name;
    const me = await client.whoami();
    const mine = (await client.listMembers(org.id)).find((member) => member.user_id === me.id);
    if (!mine) throw new CliError(`you are not a member of ${org.name} yourself (an organization token cannot leave)`);
    await client.removeMember(org.id, mine.id);
    const terminal = this.terminal;
    if (this.json) terminal.printJson(mine);
    else terminal.success(`You left ${terminal.err.bold(org.name)}`);
    return 0;
  }
}
