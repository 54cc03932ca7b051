import {
  memberScope,
  NotFoundError,
  type Org,
  type OrgMember,
  type OrgRole,
  ownerScope,
  type Stores,
  type User,
} from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { newApiToken } from './fixtures.js';
import { newDelivery, newNotification } from './notifications.js';
import { newPolicy } from './policies.js';
import { newVcsConnection } from './vcs.js';
import {
  at,
  newCloudIdentity,
  newJob,
  newPlanArtifact,
  newUser,
  newVine,
  newVineyard,
  newWorker,
  later,
  uuid,
} from './fixtures.js';
import { expectConflict, type OpenStoreHarness, rejectionOf, type StoreSuite, useStoreSuite } from './harness.js';

let orgSerial = 0;
export function newOrg(overrides: Partial<Org> = {}): Org {
  orgSerial += 1;
  return { id: uuid(), name: `Org ${orgSerial} ${uuid().slice(0, 8)}`, created_at: later(), ...overrides };
}

/** A joined member when `user` is given, else a pending invitation at `email`. */
export function newMember(
  orgId: string,
  who: { user: User } | { email: string },
  role: OrgRole = 'viewer',
  overrides: Partial<OrgMember> = {},
): OrgMember {
  const created = later();
  return {
    id: uuid(),
    org_id: orgId,
    user_id: 'user' in who ? who.user.id : null,
    email: 'user' in who ? who.user.email : who.email,
    role,
    created_at: created,
    joined_at: 'user' in who ? created : null,
    invited_by: null,
    ...overrides,
  };
}

/** An organization, created as it acts itself, with `owner` joined as its owner. */
export async function seedOrg(suite: StoreSuite, owner: User, org: Org = newOrg()) {
  return suite.uow.run(ownerScope(org.id), async (stores) => {
    const created = await stores.orgs.create(org);
    const membership = await stores.orgs.addMember(newMember(org.id, { user: owner }, 'owner'));
    return { org: created, membership };
  });
}

export function asOrg<T>(suite: StoreSuite, orgId: string, actorId: string, work: (stores: Stores) => Promise<T>) {
  return suite.uow.run(ownerScope(orgId, actorId), work);
}

export function describeOrgStoreConformance(open: OpenStoreHarness): void {
  describe('OrgStore organizations', () => {
    const suite = useStoreSuite(open);

    it('creates an organization and reads it back, every field intact', async () => {
      const user = await suite.asSystem((stores) => stores.users.create(newUser()));
      const org = newOrg({ name: 'Acme Platform' });
      const { org: created } = await seedOrg(suite, user, org);
      expect(created).toEqual(org);
      expect(await asOrg(suite, org.id, user.id, (stores) => stores.orgs.get(org.id))).toEqual(org);
      expect(await suite.asSystem((stores) => stores.orgs.get(org.id))).toEqual(org);
      expect(await suite.asSystem((stores) => stores.orgs.get(uuid()))).toBeNull();
    });

    it('keeps names unique case-insensitively (org_name_taken), on create and on rename', async () => {
      const user = await suite.asSystem((stores) => stores.users.create(newUser()));
      const { org: acme } = await seedOrg(suite, user, newOrg({ name: 'Acme' }));
      const { org: other } = await seedOrg(suite, user, newOrg({ name: 'Other' }));
      await expectConflict(
        suite.uow.run(ownerScope(acme.id), (stores) => stores.orgs.create({ ...acme, name: 'Acme 2' })),
        'org_exists',
      );
      const clash = newOrg({ name: 'ACME' });
      await expectConflict(
        suite.uow.run(ownerScope(clash.id), (stores) => stores.orgs.create(clash)),
        'org_name_taken',
      );
      await expectConflict(
        asOrg(suite, other.id, user.id, (stores) => stores.orgs.rename(other.id, 'acme')),
        'org_name_taken',
      );
      expect(await asOrg(suite, acme.id, user.id, (stores) => stores.orgs.rename(acme.id, 'ACME'))).toEqual({
        ...acme,
        name: 'ACME',
      });
      expect(await suite.asSystem((stores) => stores.orgs.get(acme.id))).toEqual({ ...acme, name: 'ACME' });
      expect(await suite.asSystem((stores) => stores.orgs.get(other.id))).toEqual(other);
    });

    it('renaming an organization that does not exist is org_not_found', async () => {
      const missing = uuid();
      const error = await rejectionOf(suite.uow.run(ownerScope(missing), (stores) => stores.orgs.rename(missing, 'x')));
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ code: 'org_not_found' });
    });

    it("an organization's row is its own: other owners neither see nor write it", async () => {
      const [user, stranger] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const { org } = await seedOrg(suite, user);
      expect(await suite.asOwner(stranger.id, (stores) => stores.orgs.get(org.id))).toBeNull();
      expect(await suite.uow.run(memberScope(stranger.id, []), (stores) => stores.orgs.get(org.id))).toBeNull();
      expect(await suite.uow.run(memberScope(user.id, [org.id]), (stores) => stores.orgs.get(org.id))).toEqual(org);
      const foreign = newOrg();
      await rejectionOf(suite.asOwner(stranger.id, (stores) => stores.orgs.create(foreign)));
      expect(await suite.asSystem((stores) => stores.orgs.get(foreign.id))).toBeNull();
      await suite.asOwner(stranger.id, (stores) => stores.orgs.delete(org.id));
      expect(await suite.asSystem((stores) => stores.orgs.get(org.id))).toEqual(org);
    });

    it('an organization owns records like a user does; deleting it deletes them, its members and nothing else', async () => {
      const [user, other] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const { org } = await seedOrg(suite, user, newOrg({ name: 'Doomed' }));
      const seed = (ownerId: string) => async (stores: Stores) => {
        const identity = await stores.cloudIdentities.create(newCloudIdentity(ownerId));
        const vineyard = await stores.vineyards.create(newVineyard(ownerId));
        const vine = await stores.vines.create(newVine(ownerId, vineyard.id, { cloud_identity_id: identity.id }));
        const worker = await stores.workers.create(newWorker(ownerId));
        const job = await stores.jobs.create(newJob(ownerId, vine, { assigned_worker_id: worker.id }));
        const deploy = await stores.jobs.create(newJob(ownerId, vine, { job_type: 'DEPLOY', plan_job_id: job.id }));
        await stores.logs.append(ownerId, job.id, 'hello\n', 'STDOUT', later());
        await stores.planArtifacts.save(newPlanArtifact(ownerId, job.id));
        await stores.vines.saveComponents(
          ownerId,
          vine.id,
          { cluster: null, argocd: null, outputs: { values: { a: 1 }, job_id: job.id } },
          later(),
        );
        await stores.states.addVersion({
          owner_id: ownerId,
          vine_id: vine.id,
          serial: 1,
          lineage: uuid(),
          size: 10,
          sha256: 'd'.repeat(64),
          storage_key: `state/${ownerId}/${vine.id}/1`,
          created_by: null,
          upload_id: null,
          job_id: job.id,
          created_at: later(),
        });
        const lockId = uuid();
        await stores.states.acquireLock({
          owner_id: ownerId,
          vine_id: vine.id,
          lock_id: lockId,
          info: { ID: lockId },
          created_at: later(),
        });
        const notification = await stores.notifications.create(newNotification(ownerId));
        await stores.outbox.add('notification', newDelivery(notification));
        const policy = await stores.policies.create(newPolicy(ownerId));
        const token = await stores.apiTokens.create(
          ownerId === org.id ? newApiToken(user.id, { org_id: org.id }) : newApiToken(ownerId),
        );
        await stores.vcs.put(newVcsConnection(ownerId, vine.id));
        return { vineyard, vine, worker, job, deploy, notification, policy, token };
      };
      const orgs = await asOrg(suite, org.id, user.id, seed(org.id));
      const mine = await suite.asOwner(other.id, seed(other.id));
      expect(await suite.uow.run(memberScope(user.id, [org.id]), (stores) => stores.vineyards.list(org.id))).toEqual([
        orgs.vineyard,
      ]);

      await asOrg(suite, org.id, user.id, (stores) => stores.orgs.delete(org.id));

      await suite.asSystem(async (stores) => {
        expect(await stores.orgs.get(org.id)).toBeNull();
        expect(await stores.orgs.membershipsOf(user.id)).toEqual([]);
        expect(await stores.vineyards.list(org.id)).toEqual([]);
        expect(await stores.vines.list(org.id)).toEqual([]);
        expect(await stores.jobs.list(org.id)).toEqual([]);
        expect(await stores.workers.get(org.id, orgs.worker.id)).toBeNull();
        expect(await stores.cloudIdentities.get(org.id, orgs.vine.cloud_identity_id ?? '')).toBeNull();
        expect(await stores.states.listVersions(org.id, orgs.vine.id)).toEqual([]);
        expect(await stores.states.getLock(org.id, orgs.vine.id)).toBeNull();
        expect(await stores.planArtifacts.get(org.id, orgs.job.id)).toBeNull();
        // Issue 23: its notifications (with their deliveries), policies, API tokens and connections too.
        expect(await stores.notifications.find(orgs.notification.id)).toBeNull();
        expect(await stores.policies.find(orgs.policy.id)).toBeNull();
        expect(await stores.apiTokens.find(orgs.token.id)).toBeNull();
        expect(await stores.apiTokens.findByHash(orgs.token.token_hash)).toBeNull();
        expect(await stores.vcs.get(org.id, orgs.vine.id)).toBeNull();
        // The other owner's records are all there.
        expect(await stores.vineyards.list(other.id)).toEqual([mine.vineyard]);
        expect((await stores.jobs.list(other.id)).map((job) => job.id).sort()).toEqual(
          [mine.job.id, mine.deploy.id].sort(),
        );
        expect(await stores.logs.list(other.id, mine.job.id, 0, 10)).toHaveLength(1);
        expect(await stores.planArtifacts.get(other.id, mine.job.id)).not.toBeNull();
        expect(await stores.states.listVersions(other.id, mine.vine.id)).toHaveLength(1);
        expect(await stores.states.getLock(other.id, mine.vine.id)).not.toBeNull();
        expect(await stores.notifications.find(mine.notification.id)).not.toBeNull();
        expect(await stores.policies.find(mine.policy.id)).not.toBeNull();
        expect(await stores.apiTokens.find(mine.token.id)).not.toBeNull();
        expect(await stores.vcs.get(other.id, mine.vine.id)).not.toBeNull();
      });
      // The name is free again.
      const again = newOrg({ name: 'doomed' });
      expect(await suite.uow.run(ownerScope(again.id), (stores) => stores.orgs.create(again))).toEqual(again);
    });
  });

  describe('OrgStore members', () => {
    const suite = useStoreSuite(open);

    it('adds joined and pending members, reads them back, pages them oldest first', async () => {
      const [owner, joined] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const { org, membership } = await seedOrg(suite, owner);
      const added = [
        newMember(org.id, { user: joined }, 'operator', { created_at: at(10), joined_at: at(11) }),
        newMember(org.id, { email: 'Invitee@Example.test' }, 'admin', { created_at: at(20) }),
        newMember(org.id, { email: 'b@example.test' }, 'viewer', { created_at: at(20) }),
        newMember(org.id, { email: 'c@example.test' }, 'owner', { created_at: at(30) }),
      ];
      await asOrg(suite, org.id, owner.id, async (stores) => {
        for (const member of added) expect(await stores.orgs.addMember(member)).toEqual(member);
      });
      const pending = added[1] as OrgMember;
      expect(await asOrg(suite, org.id, owner.id, (stores) => stores.orgs.getMember(org.id, pending.id))).toEqual(
        pending,
      );
      expect(await asOrg(suite, org.id, owner.id, (stores) => stores.orgs.getMember(org.id, uuid()))).toBeNull();

      // Oldest first: the seeded owner's time is later than the fixed times above.
      const expected = [...added, membership];
      const seen: OrgMember[] = [];
      let page = await asOrg(suite, org.id, owner.id, (stores) => stores.orgs.pageMembers(org.id, { limit: 2 }));
      seen.push(...page.items);
      while (page.next) {
        const after = page.next;
        page = await asOrg(suite, org.id, owner.id, (stores) => stores.orgs.pageMembers(org.id, { limit: 2, after }));
        seen.push(...page.items);
      }
      expect(seen).toEqual(expected);
      expect(await asOrg(suite, org.id, owner.id, (stores) => stores.orgs.countOwners(org.id))).toBe(2);
    });

    it('refuses a second membership for one email, whatever its case (member_exists), not in another org', async () => {
      const owner = await suite.asSystem((stores) => stores.users.create(newUser()));
      const { org } = await seedOrg(suite, owner);
      const { org: second } = await seedOrg(suite, owner);
      await asOrg(suite, org.id, owner.id, (stores) =>
        stores.orgs.addMember(newMember(org.id, { email: 'dup@example.test' })),
      );
      await expectConflict(
        asOrg(suite, org.id, owner.id, (stores) =>
          stores.orgs.addMember(newMember(org.id, { email: 'DUP@example.test' })),
        ),
        'member_exists',
      );
      await expectConflict(
        asOrg(suite, org.id, owner.id, (stores) =>
          stores.orgs.addMember(newMember(org.id, { email: owner.email.toUpperCase() })),
        ),
        'member_exists',
      );
      const first = await asOrg(suite, org.id, owner.id, (stores) =>
        stores.orgs.addMember(newMember(org.id, { email: 'first@example.test' })),
      );
      await expectConflict(
        asOrg(suite, org.id, owner.id, (stores) => stores.orgs.addMember({ ...first, email: 'new@example.test' })),
        'member_exists',
      );
      await expectConflict(
        asOrg(suite, org.id, owner.id, (stores) =>
          stores.orgs.addMember(
            newMember(org.id, { email: 'ghost@example.test' }, 'viewer', { user_id: uuid(), joined_at: later() }),
          ),
        ),
        'referenced_record_missing',
      );
      const elsewhere = newMember(second.id, { email: 'dup@example.test' });
      expect(await asOrg(suite, second.id, owner.id, (stores) => stores.orgs.addMember(elsewhere))).toEqual(elsewhere);
    });

    it('changes roles and removes members; an unknown member is member_not_found', async () => {
      const [owner, user] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const { org } = await seedOrg(suite, owner);
      const member = await asOrg(suite, org.id, owner.id, (stores) =>
        stores.orgs.addMember(newMember(org.id, { user }, 'viewer')),
      );
      expect(await asOrg(suite, org.id, owner.id, (stores) => stores.orgs.setRole(org.id, member.id, 'owner'))).toEqual(
        { ...member, role: 'owner' },
      );
      expect(await asOrg(suite, org.id, owner.id, (stores) => stores.orgs.countOwners(org.id))).toBe(2);
      const error = await rejectionOf(
        asOrg(suite, org.id, owner.id, (stores) => stores.orgs.setRole(org.id, uuid(), 'admin')),
      );
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ code: 'member_not_found' });
      await asOrg(suite, org.id, owner.id, (stores) => stores.orgs.removeMember(org.id, member.id));
      expect(await asOrg(suite, org.id, owner.id, (stores) => stores.orgs.getMember(org.id, member.id))).toBeNull();
      expect(await asOrg(suite, org.id, owner.id, (stores) => stores.orgs.countOwners(org.id))).toBe(1);
      expect(await suite.asSystem((stores) => stores.orgs.membershipsOf(user.id))).toEqual([]);
    });

    it("one organization's members are invisible and untouchable from another's work", async () => {
      const [owner, user] = await suite.asSystem(async (stores) => [
        await stores.users.create(newUser()),
        await stores.users.create(newUser()),
      ]);
      const { org: a } = await seedOrg(suite, owner);
      const { org: b } = await seedOrg(suite, owner);
      const member = await asOrg(suite, a.id, owner.id, (stores) =>
        stores.orgs.addMember(newMember(a.id, { user }, 'viewer')),
      );
      await asOrg(suite, b.id, owner.id, async (stores) => {
        expect(await stores.orgs.getMember(a.id, member.id)).toBeNull();
        expect((await stores.orgs.pageMembers(a.id, { limit: 10 })).items).toEqual([]);
        expect(await stores.orgs.countOwners(a.id)).toBe(0);
        await stores.orgs.removeMember(a.id, member.id);
        await rejectionOf(stores.orgs.setRole(a.id, member.id, 'owner'));
      });
      await rejectionOf(
        asOrg(suite, b.id, owner.id, (stores) => stores.orgs.addMember(newMember(a.id, { email: 'x@example.test' }))),
      );
      expect(await asOrg(suite, a.id, owner.id, (stores) => stores.orgs.getMember(a.id, member.id))).toEqual(member);
    });
  });
}
