import { ConflictError, ForbiddenError, NotFoundError, type UserActor } from '@trellis/core';
import { createTestCore, seedUser, type TestCore, type TestUser } from '@trellis/testkit';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from './helpers.js';

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

  it('adds a known person at once and an unknown email as pending, who joins on first sign-in', async () => {
    const org = await core.useCases.orgs.create(ada, { name: 'platform' });
    const known = await core.useCases.orgs.addMember(ada, org.id, { email: 'BOB@example.test', role: 'viewer' });
    expect(known).toMatchObject({ user_id: bob.userId, email: 'bob@example.test', status: 'active', role: 'viewer' });
    const pending = await core.useCases.orgs.addMember(ada, org.id, { email: 'cy@example.test', role: 'operator' });
    expect(pending).toMatchObject({ user_id: null, status: 'pending', joined_at: null });
    await expectFailure(
      core.useCases.orgs.addMember(ada, org.id, { email: 'cy@example.test', role: 'viewer' }),
      ConflictError,
      'member_exists',
    );
    const cy = await seedUser(core, { email: 'cy@example.test' });
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
});
