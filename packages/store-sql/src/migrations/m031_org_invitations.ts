import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Invitations (issue 23). Adding a member no longer makes anyone a member: it writes a pending
 * membership (as m010 already had for emails that had not signed in), which the person of that
 * email accepts or declines. `invited_by` names the member who sent it, so the invitee can tell a
 * colleague's invitation from a stranger's; rows from before this migration have none.
 *
 * The policies of m010 already let a person read the invitations at their own email and accept
 * them (make them their own) in their own work; declining is system work after core checked the
 * email, like adding a member. Additive: a replica of the previous release ignores the column.
 */
export const orgInvitationsMigration: TrellisMigration = {
  name: '031_org_invitations',
  async up(knex: Knex, _dialect: DialectName): Promise<void> {
    await knex.schema.alterTable('org_members', (t) => {
      t.uuid('invited_by');
    });
  },
};
