import { ORG_ROLES } from '@trellis/core';
import { Command, Option } from 'clipanion';
import * as t from 'typanion';
import { resolveOrg } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class AddMemberCommand extends TrellisCommand {
  static override paths = [['orgs', 'members', 'add']];

  static override usage = Command.Usage({
    category: 'Organizations',
    description: 'Invite a person to an organization by email',
    details: `
      Roles, least first: \`viewer\` reads everything of the organization; \`operator\` also runs and cancels jobs; \`admin\` also manages vineyards, vines, agents, members and tokens; \`owner\` also manages owners and deletes the organization. Admins add members up to \`admin\`; only owners add owners.

      Nobody becomes a member by someone else's act: this sends an invitation to the email, and the person joins when they accept it (\`trellis orgs invitations accept ORG\`, or on the Organizations page), now or after their first sign-in with that email. Until then the membership is pending and shows them nothing of the organization.
    `,
    examples: [
      ['Invite a viewer', '$0 orgs members add platform-team ada@example.com --role viewer'],
      ['Invite an operator', '$0 orgs members add platform-team grace@example.com --role operator'],
    ],
  });

  org = Option.String({ name: 'org' });
  email = Option.String({ name: 'email' });
  role = Option.String('--role', {
    required: true,
    description: `The member's role (${ORG_ROLES.join(', ')})`,
    validator: t.isEnum(ORG_ROLES),
  });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const org = await resolveOrg(client, this.org);
    this.orgName = org.name;
    const member = await client.addMember(org.id, { email: this.email, role: this.role });
    const terminal = this.terminal;
    if (this.json) terminal.printJson(member);
    else {
      const bold = terminal.err.bold;
      terminal.success(
        `Invited ${bold(member.email)} to ${bold(org.name)} as ${member.role}; they join when they accept (trellis orgs invitations accept)`,
      );
      terminal.print(member.id);
    }
    return 0;
  }
}
