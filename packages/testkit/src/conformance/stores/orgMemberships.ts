import { memberScope } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { later, newUser } from './fixtures.js';
import { type OpenStoreHarness, useStoreSuite } from './harness.js';
import { asOrg, newMember, seedOrg } from './orgs.js';

/** A person's memberships across organizations: joined ones, invitations, accepting and declining. */
export function describeOrgMembershipConformance(open: OpenStoreHarness): void {
  describe('OrgStore memberships of a person', () => {
    const suite = useStoreSuite(open);

    it('membershipsOf lists joined memberships only, in system work and in the person’s own work', async () => {
      const [owner, user, stranger] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const { org: a } = await seedOrg(suite, owner);
      const { org: b } = await seedOrg(suite, owner);
      const { org: c } = await seedOrg(suite, owner);
      await asOrg(suite, a.id, owner.id, (stores) => stores.orgs.addMember(newMember(a.id, { user }, 'admin')));
      await asOrg(suite, b.id, owner.id, (stores) => stores.orgs.addMember(newMember(b.id, { user }, 'viewer')));
      await asOrg(suite, c.id, owner.id, (stores) => stores.orgs.addMember(newMember(c.id, { email: user.email })));
      const expected = [
        { org_id: a.id, role: 'admin' },
        { org_id: b.id, role: 'viewer' },
      ];
      expect(await suite.asSystem((stores) => stores.orgs.membershipsOf(user.id))).toEqual(expected);
      expect(await suite.asOwner(user.id, (stores) => stores.orgs.membershipsOf(user.id))).toEqual(expected);
      expect(await suite.uow.run(memberScope(user.id, []), (stores) => stores.orgs.membershipsOf(user.id))).toEqual(
        expected,
      );
      expect(await suite.asOwner(stranger.id, (stores) => stores.orgs.membershipsOf(user.id))).toEqual([]);
      expect(await suite.asSystem((stores) => stores.orgs.membershipsOf(stranger.id))).toEqual([]);
      expect(await suite.asSystem((stores) => stores.orgs.membershipsOf(owner.id))).toEqual(
        [a, b, c].map((org) => ({ org_id: org.id, role: 'owner' })),
      );
    });

    it('invitationsAt lists the pending memberships at an email (any case), oldest first, across organizations', async () => {
      const [owner, user] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser({ email: 'new.person@example.test' })),
      ]);
      const { org: a } = await seedOrg(suite, owner);
      const { org: b } = await seedOrg(suite, owner);
      const invitations = [
        await asOrg(suite, a.id, owner.id, (stores) =>
          stores.orgs.addMember(
            newMember(a.id, { email: 'New.Person@example.test' }, 'operator', { invited_by: owner.id }),
          ),
        ),
        await asOrg(suite, b.id, owner.id, (stores) =>
          stores.orgs.addMember(newMember(b.id, { email: 'new.person@example.test' }, 'viewer')),
        ),
      ];
      await asOrg(suite, b.id, owner.id, (stores) =>
        stores.orgs.addMember(newMember(b.id, { email: 'someone.else@example.test' })),
      );
      expect(invitations[0]?.invited_by).toBe(owner.id);
      expect(await suite.asSystem((stores) => stores.orgs.invitationsAt('NEW.person@example.test'))).toEqual(
        invitations,
      );
      // The person's own work sees the invitations at their own email, and nobody else's.
      expect(await suite.asOwner(user.id, (stores) => stores.orgs.invitationsAt(user.email))).toEqual(invitations);
      expect(await suite.asOwner(user.id, (stores) => stores.orgs.invitationsAt('someone.else@example.test'))).toEqual(
        [],
      );
      // An invitation is no membership.
      expect(await suite.asSystem((stores) => stores.orgs.membershipsOf(user.id))).toEqual([]);
    });

    it('acceptInvitation takes one invitation at the person’s own email; declineInvitation deletes one', async () => {
      const [owner, user, stranger] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const { org } = await seedOrg(suite, owner);
      const { org: other } = await seedOrg(suite, owner);
      const mine = await asOrg(suite, org.id, owner.id, (stores) =>
        stores.orgs.addMember(newMember(org.id, { email: user.email.toUpperCase() }, 'admin')),
      );
      const alsoMine = await asOrg(suite, other.id, owner.id, (stores) =>
        stores.orgs.addMember(newMember(other.id, { email: user.email }, 'viewer')),
      );
      const theirs = await asOrg(suite, org.id, owner.id, (stores) =>
        stores.orgs.addMember(newMember(org.id, { email: stranger.email })),
      );
      // Someone else's invitation cannot be taken, neither by naming its email nor for another person.
      expect(
        await suite.asOwner(user.id, (stores) =>
          stores.orgs.acceptInvitation(theirs.id, stranger.email, user.id, later()),
        ),
      ).toBeNull();
      expect(
        await suite.asOwner(stranger.id, (stores) =>
          stores.orgs.acceptInvitation(mine.id, user.email, user.id, later()),
        ),
      ).toBeNull();
      // Nor one of another email than its own.
      expect(
        await suite.asSystem((stores) => stores.orgs.acceptInvitation(mine.id, stranger.email, user.id, later())),
      ).toBeNull();
      const when = later();
      expect(
        await suite.asOwner(user.id, (stores) => stores.orgs.acceptInvitation(mine.id, user.email, user.id, when)),
      ).toEqual({ ...mine, user_id: user.id, joined_at: when });
      // Accepted once: no longer an invitation.
      expect(
        await suite.asOwner(user.id, (stores) => stores.orgs.acceptInvitation(mine.id, user.email, user.id, later())),
      ).toBeNull();
      expect(await suite.asOwner(user.id, (stores) => stores.orgs.membershipsOf(user.id))).toEqual([
        { org_id: org.id, role: 'admin' },
      ]);
      expect(await asOrg(suite, org.id, owner.id, (stores) => stores.orgs.getMember(org.id, theirs.id))).toEqual(
        theirs,
      );

      expect(await suite.asSystem((stores) => stores.orgs.declineInvitation(alsoMine.id, stranger.email))).toBeNull();
      expect(await suite.asSystem((stores) => stores.orgs.declineInvitation(mine.id, user.email))).toBeNull();
      expect(await suite.asSystem((stores) => stores.orgs.declineInvitation(alsoMine.id, user.email))).toEqual(
        alsoMine,
      );
      expect(await suite.asSystem((stores) => stores.orgs.invitationsAt(user.email))).toEqual([]);
      expect(
        await asOrg(suite, other.id, owner.id, (stores) => stores.orgs.getMember(other.id, alsoMine.id)),
      ).toBeNull();
    });

    it('lock holds the organization for the unit of work and refuses nothing', async () => {
      const owner = await suite.asSystem((stores) => stores.users.create(newUser()));
      const { org } = await seedOrg(suite, owner);
      expect(
        await asOrg(suite, org.id, owner.id, async (stores) => {
          await stores.orgs.lock(org.id);
          return stores.orgs.countOwners(org.id);
        }),
      ).toBe(1);
    });
  });
}
