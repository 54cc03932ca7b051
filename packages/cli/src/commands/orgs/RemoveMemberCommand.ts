import { Command, Option } from 'clipanion';
import { resolveMember, resolveOrg } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class RemoveMemberCommand extends TrellisCommand {
  static override paths = [['orgs', 'members', 'remove']];

  static override usage = Command.Usage({
    category: 'Organizations',
    description: 'Remove a member from an organization',
    details:
      'The member is named by email or by membership id. They lose access at once; the records of the organization stay. Only owners remove owners, and the last owner cannot leave.',
    examples: [['Remove a member', '$0 orgs members remove platform-team ada@example.com']],
  });

  org = Option.String({ name: 'org' });
  member = Option.String({ name: 'email-or-member-id' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const org = await resolveOrg(client, this.org);
    this.orgName = org.name;
    const member = await resolveMember(client, org, this.member);
    await client.removeMember(org.id, member.id);
    const terminal = this.terminal;
    if (this.json) terminal.printJson(member);
    else terminal.success(`Removed ${terminal.err.bold(member.email)} from ${terminal.err.bold(org.name)}`);
    return 0;
  }
}
