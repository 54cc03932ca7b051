import { ORG_ROLES } from '@trellis/core';
import { Command, Option } from 'clipanion';
import * as t from 'typanion';
import { resolveMember, resolveOrg } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class SetMemberRoleCommand extends TrellisCommand {
  static override paths = [['orgs', 'members', 'set-role']];

  static override usage = Command.Usage({
    category: 'Organizations',
    description: "Change a member's role",
    details:
      'The member is named by email or by membership id (`trellis orgs members list` shows both). Only owners make or demote owners, and the last owner cannot be demoted.',
    examples: [['Make a viewer an operator', '$0 orgs members set-role platform-team ada@example.com operator']],
  });

  org = Option.String({ name: 'org' });
  member = Option.String({ name: 'email-or-member-id' });
  role = Option.String({ name: 'role', validator: t.isEnum(ORG_ROLES) });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const org = await resolveOrg(client, this.org);
    this.orgName = org.name;
    const member = await resolveMember(client, org, this.member);
    const changed = await client.setMemberRole(org.id, member.id, this.role);
    const terminal = this.terminal;
    if (this.json) terminal.printJson(changed);
    else {
      const bold = terminal.err.bold;
      terminal.success(
        changed.role === member.role
          ? `${bold(changed.email)} already is ${changed.role} in ${bold(org.name)}`
          : `${bold(changed.email)} is now ${changed.role} in ${bold(org.name)} (was ${member.role})`,
      );
    }
    return 0;
  }
}
