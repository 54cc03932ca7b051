import {
  Access,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  ownerScope,
  UnauthorizedError,
  type UserActor,
} from '@trellis/core';
import { createTestCore, seedUser, type TestCore, type TestUser } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from '../usecases/helpers.js';

let core: TestCore;
let ada: TestUser;
let bob: TestUser;
beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core, { email: 'ada@example.test' });
  bob = await seedUser(core, { email: 'bob@example.test' });
});

async function orgWith(role: 'viewer' | 'operator' | 'admin' | 'owner') {
  const org = await core.useCases.orgs.create(ada, { name: `team-${role}` });
  const member = await core.useCases.orgs.addMember(ada, org.id, { email: bob.email, role });
  await core.useCases.invitations.accept(bob, member.id);
  return { org, member };
}

describe('organizations', () => {
  it('makes the creator its owner, lists it with the role, and 404s for a non-member', async () => {
    const org = await core.useCases.orgs.create(ada, { name: 'platform' });
    expect(org).toEqual({ id: expect.any(String), name: 'platform', role: 'owner', created_at: expect.any(String) });
    expect((await core.useCases.orgs.list(ada)).items).toEqual([org]);
    expect((await core.useCases.orgs.list(bob)).items).toEqual([]);
    await expectFailure(core.useCases.orgs.get(bob, org.id), NotFoundError, 'org_not_found');
    await expectFailure(core.useCases.orgs.create(bob, { name: 'platform' }), ConflictError, 'org_name_taken');
  });

  it('invites a known person and an unknown email alike; each joins only by accepting (issue 23)', async () => {
    const org = await core.useCases.orgs.create(ada, { name: 'platform' });
    const known = await core.useCases.orgs.addMember(ada, org.id, { email: 'BOB@example.test', role: 'viewer' });
    expect(known).toMatchObject({
      user_id: null,
      email: 'bob@example.test',
      status: 'pending',
      role: 'viewer',
      invited_by: ada.userId,
    });
    await expectFailure(core.useCases.orgs.get(bob, org.id), NotFoundError, 'org_not_found');
    const pending = await core.useCases.orgs.addMember(ada, org.id, { email: 'cy@example.test', role: 'operator' });
    expect(pending).toMatchObject({ user_id: null, status: 'pending', joined_at: null });
    await expectFailure(
      core.useCases.orgs.addMember(ada, org.id, { email: 'cy@example.test', role: 'viewer' }),
      ConflictError,
      'member_exists',
    );
    const cy = await seedUser(core, { email: 'cy@example.test' });
    await expectFailure(core.useCases.orgs.get(cy, org.id), NotFoundError, 'org_not_found');
    expect((await core.useCases.invitations.list(cy)).map((invitation) => invitation.org_name)).toEqual(['platform']);
    await core.useCases.invitations.accept(cy, pending.id);
    await core.useCases.invitations.accept(bob, known.id);
    expect((await core.useCases.orgs.get(cy, org.id)).role).toBe('operator');
    const members = (await core.useCases.orgs.listMembers(cy, org.id)).items;
    expect(members.map((member) => [member.email, member.status])).toEqual([
      ['ada@example.test', 'active'],
      ['bob@example.test', 'active'],
      ['cy@example.test', 'active'],
    ]);
  });

  it('lets admins manage members but not owners; only owners manage owners', async () => {
    const { org } = await orgWith('admin');
    const members = (await core.useCases.orgs.listMembers(ada, org.id)).items;
    const adaMember = members.find((member) => member.user_id === ada.userId);
    const added = await core.useCases.orgs.addMember(bob, org.id, { email: 'dee@example.test', role: 'operator' });
    await core.useCases.orgs.setMemberRole(bob, org.id, added.id, { role: 'viewer' });
    const error = await expectFailure(
      core.useCases.orgs.setMemberRole(bob, org.id, added.id, { role: 'owner' }),
      ForbiddenError,
      'insufficient_role',
    );
    expect(error).toMatchObject({ requiredRole: 'owner', role: 'admin' });
    await expectFailure(
      core.useCases.orgs.removeMember(bob, org.id, adaMember?.id),
      ForbiddenError,
      'insufficient_role',
    );
    await expectFailure(
      core.useCases.orgs.addMember(bob, org.id, { email: 'eve@example.test', role: 'owner' }),
      ForbiddenError,
      'insufficient_role',
    );
    await core.useCases.orgs.removeMember(bob, org.id, added.id);
  });

  it('keeps the last owner: no leaving, removal or demotion (409 last_owner)', async () => {
    const { org, member } = await orgWith('viewer');
    const adaMember = (await core.useCases.orgs.listMembers(ada, org.id)).items.find((m) => m.user_id === ada.userId);
    await expectFailure(core.useCases.orgs.removeMember(ada, org.id, adaMember?.id), ConflictError, 'last_owner');
    await expectFailure(
      core.useCases.orgs.setMemberRole(ada, org.id, adaMember?.id, { role: 'admin' }),
      ConflictError,
      'last_owner',
    );
    await core.useCases.orgs.setMemberRole(ada, org.id, member.id, { role: 'owner' });
    await core.useCases.orgs.removeMember(ada, org.id, adaMember?.id);
    await expectFailure(core.useCases.orgs.get(ada, org.id), NotFoundError, 'org_not_found');
  });

  it('a pending owner does not count: the last joined owner still cannot leave', async () => {
    const org = await core.useCases.orgs.create(ada, { name: 'platform' });
    await core.useCases.orgs.addMember(ada, org.id, { email: 'later@example.test', role: 'owner' });
    const adaMember = (await core.useCases.orgs.listMembers(ada, org.id)).items.find((m) => m.user_id === ada.userId);
    await expectFailure(core.useCases.orgs.removeMember(ada, org.id, adaMember?.id), ConflictError, 'last_owner');
    const later = await seedUser(core, { email: 'later@example.test' });
    // Signed in, still pending: an invitation counts only once accepted.
    await expectFailure(core.useCases.orgs.removeMember(ada, org.id, adaMember?.id), ConflictError, 'last_owner');
    const [invitation] = await core.useCases.invitations.list(later);
    await core.useCases.invitations.accept(later, invitation?.id);
    await core.useCases.orgs.removeMember(ada, org.id, adaMember?.id);
  });

  it('a viewer may leave on their own', async () => {
    const { org, member } = await orgWith('viewer');
    await core.useCases.orgs.removeMember(bob, org.id, member.id);
    await expectFailure(core.useCases.orgs.get(bob, org.id), NotFoundError, 'org_not_found');
  });
});

describe('ownership follows the vineyard', () => {
  it('puts vineyards, vines and jobs of an organization in it, readable by members, 404 for others', async () => {
    const { org } = await orgWith('operator');
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod', org_id: org.id });
    expect(vineyard.owner_id).toBe(org.id);
    // Names are per owner: a personal vineyard may share it.
    await core.useCases.vineyards.create(ada, { name: 'prod' });
    const vine = await core.useCases.vines.create(ada, {
      vineyard_id: vineyard.id,
      name: 'net',
      project_name: 'net',
      source: { type: 'inline', files: { 'main.tf': '' } },
    });
    expect(vine.owner_id).toBe(org.id);
    const job = await core.useCases.jobs.create(bob, { job_type: 'PLAN', configuration_id: vine.id });
    expect(job.owner_id).toBe(org.id);
    expect((await core.useCases.jobs.list(bob)).items.map((item) => item.id)).toEqual([job.id]);
    expect((await core.useCases.vineyards.list(ada)).items).toHaveLength(2);
    expect((await core.useCases.vineyards.list(ada, { org_id: 'personal' })).items).toHaveLength(1);
    expect((await core.useCases.vineyards.list(ada, { org_id: org.id })).items.map((v) => v.id)).toEqual([vineyard.id]);
    await expectFailure(
      core.useCases.vines.create(bob, {
        vineyard_id: vineyard.id,
        name: 'db',
        project_name: 'db',
        source: { type: 'inline', files: { 'main.tf': '' } },
      }),
      ForbiddenError,
      'insufficient_role',
    );
    const stranger: UserActor = await seedUser(core);
    await expectFailure(core.useCases.jobs.get(stranger, job.id), NotFoundError, 'job_not_found');
    await expectFailure(core.useCases.vineyards.get(stranger, vineyard.id), NotFoundError, 'vineyard_not_found');
    await expectFailure(core.useCases.vineyards.list(stranger, { org_id: org.id }), NotFoundError, 'org_not_found');
    await expectFailure(core.useCases.orgs.delete(ada, org.id), ConflictError, 'org_busy');
    await core.useCases.jobs.cancel(bob, job.id);
    await core.useCases.orgs.delete(ada, org.id);
    await expectFailure(core.useCases.vineyards.get(ada, vineyard.id), NotFoundError, 'vineyard_not_found');
  });

  it('an org agent claims only its organization’s jobs; a personal agent never claims them', async () => {
    const { org } = await orgWith('admin');
    const personal = await core.useCases.workers.register(ada, { name: 'mine' });
    const pooled = await core.useCases.workers.register(bob, { name: 'pool', org_id: org.id });
    const personalActor = await core.useCases.workers.authenticate(personal.worker_id, personal.worker_token);
    const pooledActor = await core.useCases.workers.authenticate(pooled.worker_id, pooled.worker_token);
    expect(pooledActor.ownerId).toBe(org.id);
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod', org_id: org.id });
    const vine = await core.useCases.vines.create(ada, {
      vineyard_id: vineyard.id,
      name: 'net',
      project_name: 'net',
      source: { type: 'inline', files: { 'main.tf': '' } },
    });
    await expectFailure(
      core.useCases.jobs.create(ada, {
        job_type: 'PLAN',
        configuration_id: vine.id,
        assigned_worker_id: personal.worker_id,
      }),
      NotFoundError,
      'worker_not_found',
    );
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect(await core.useCases.jobs.claim(personalActor)).toBeNull();
    expect((await core.useCases.jobs.claim(pooledActor))?.job.id).toBe(job.id);
  });

  it('deleting an organization deletes the plan files (and their change documents) of its records too', async () => {
    const { org } = await orgWith('admin');
    const pool = await core.useCases.workers.register(ada, { name: 'pool', org_id: org.id });
    const agent = await core.useCases.workers.authenticate(pool.worker_id, pool.worker_token);
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod', org_id: org.id });
    const vine = await core.useCases.vines.create(ada, {
      vineyard_id: vineyard.id,
      name: 'net',
      project_name: 'net',
      source: { type: 'inline', files: { 'main.tf': '' } },
    });
    const plan = await core.useCases.jobs.create(bob, { job_type: 'PLAN', configuration_id: vine.id });
    expect((await core.useCases.jobs.claim(agent))?.job.id).toBe(plan.id);
    await core.useCases.planArtifacts.upload(
      agent,
      plan.id,
      (async function* () {
        yield new TextEncoder().encode('plan bytes');
      })(),
    );
    // Its change document (issue 29) lives beside the plan file and goes with it.
    await core.useCases.planArtifacts.uploadChanges(agent, plan.id, {
      format_version: 1,
      resource_changes: [],
      resource_changes_omitted: 0,
      output_changes: [],
      output_changes_omitted: 0,
      truncated: false,
    });
    await core.useCases.jobs.reportStatus(agent, plan.id, { status: 'SUCCESS' });
    expect(core.artifacts.keys().filter((key) => key.includes(org.id))).toHaveLength(2);
    await core.useCases.orgs.delete(ada, org.id);
    expect(core.artifacts.keys().filter((key) => key.includes(org.id))).toEqual([]);
  });
});

describe('API-token actors', () => {
  it('an organization token acts only in its organization, with the lower of its role and its creator’s', async () => {
    const { org } = await orgWith('operator');
    const other = await core.useCases.orgs.create(bob, { name: 'other' });
    const access = new Access(core.deps);
    const token = { ...bob, apiToken: { id: 'token-1', orgId: org.id, role: 'admin' as const } };
    expect(await access.memberships(token)).toEqual([{ org_id: org.id, role: 'operator' }]);
    const capped = { ...bob, apiToken: { id: 'token-2', orgId: org.id, role: 'viewer' as const } };
    expect(await access.memberships(capped)).toEqual([{ org_id: org.id, role: 'viewer' }]);
    expect(await access.readScope(token)).toEqual(ownerScope(org.id, bob.userId));
    expect(await access.readScope(token, { kind: 'personal' })).toBeNull();
    await expectFailure(access.readScope(token, { kind: 'org', orgId: other.id }), NotFoundError, 'org_not_found');

    const personal = await core.useCases.vineyards.create(bob, { name: 'mine' });
    await expectFailure(core.useCases.vineyards.get(token, personal.id), NotFoundError, 'vineyard_not_found');
    expect((await core.useCases.vineyards.list(token, { org_id: 'personal' })).items).toEqual([]);
    await expectFailure(core.useCases.vineyards.create(capped, { name: 'x' }), ForbiddenError, 'insufficient_role');

    const personalToken = { ...bob, apiToken: { id: 'token-3', orgId: null, role: null } };
    expect(await access.memberships(personalToken)).toEqual(
      expect.arrayContaining([
        { org_id: org.id, role: 'operator' },
        { org_id: other.id, role: 'owner' },
      ]),
    );
    expect((await core.useCases.vineyards.get(personalToken, personal.id)).id).toBe(personal.id);

    const bobMember = (await core.useCases.orgs.listMembers(ada, org.id)).items.find((m) => m.user_id === bob.userId);
    await core.useCases.orgs.removeMember(ada, org.id, bobMember?.id);
    expect(await access.memberships(token)).toEqual([]);
    await expectFailure(access.readScope(token), UnauthorizedError, 'invalid_token');
  });
});
