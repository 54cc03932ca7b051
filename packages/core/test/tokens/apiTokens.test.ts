import {
  ForbiddenError,
  hashToken,
  InsufficientRoleError,
  NotFoundError,
  UnauthorizedError,
  type UserActor,
  ValidationError,
} from '@trellis/core';
import { addAcceptedMember, createTestCore } from '@trellis/testkit/memory';
import { describe, expect, it } from 'vitest';
import { expectFailure, UNKNOWN_ID } from '../usecases/helpers.js';

async function setup() {
  const core = createTestCore({ now: '2026-05-01T00:00:00.000Z' });
  const user = async (email: string): Promise<UserActor> => {
    const created = await core.useCases.auth.ensureUser({ email });
    return { userId: created.id, email: created.email };
  };
  return { core, alice: await user('alice@example.com'), bob: await user('bob@example.com') };
}

describe('API token use cases', () => {
  it('authenticate a personal token as its creator and record its use at most once a minute', async () => {
    const { core, alice } = await setup();
    const created = await core.useCases.apiTokens.create(alice, { name: 'ci', expires_in_days: 2 });
    expect(created.expires_at).toBe('2026-05-03T00:00:00.000Z');
    const actor = await core.useCases.apiTokens.authenticate(created.token);
    expect(actor).toEqual({
      userId: alice.userId,
      email: 'alice@example.com',
      apiToken: { id: created.id, orgId: null, role: null },
      // read with the token, for this request's access checks: alice is in no organization
      memberships: [],
    });
    const lastUsed = async () => (await core.useCases.apiTokens.list(alice, {})).items[0]?.last_used_at;
    expect(await lastUsed()).toBe('2026-05-01T00:00:00.000Z');
    core.clock.advance({ seconds: 59 });
    await core.useCases.apiTokens.authenticate(created.token);
    expect(await lastUsed()).toBe('2026-05-01T00:00:00.000Z');
    core.clock.advance({ seconds: 2 });
    await core.useCases.apiTokens.authenticate(created.token);
    expect(await lastUsed()).toBe('2026-05-01T00:01:01.000Z');
  });

  it('store only the hash of the token', async () => {
    const { core, alice } = await setup();
    const created = await core.useCases.apiTokens.create(alice, { name: 'ci' });
    const state = core.uow.snapshot();
    const stored = [...state.apiTokens.values()];
    expect(stored.map((token) => token.token_hash)).toEqual([hashToken(created.token)]);
    expect(JSON.stringify(stored)).not.toContain(created.token);
  });

  it('refuse expired, revoked, unknown and malformed tokens alike', async () => {
    const { core, alice } = await setup();
    const expiring = await core.useCases.apiTokens.create(alice, { name: 'short', expires_in_days: 1 });
    const revoked = await core.useCases.apiTokens.create(alice, { name: 'gone' });
    await core.useCases.apiTokens.revoke(alice, revoked.id);
    await expectFailure(core.useCases.apiTokens.authenticate(revoked.token), UnauthorizedError, 'invalid_token');
    core.clock.advance({ hours: 24 });
    await expectFailure(core.useCases.apiTokens.authenticate(expiring.token), UnauthorizedError, 'invalid_token');
    const unknown = `trt_${'A'.repeat(43)}`;
    await expectFailure(core.useCases.apiTokens.authenticate(unknown), UnauthorizedError, 'invalid_token');
    await expectFailure(core.useCases.apiTokens.authenticate('trt_x'), UnauthorizedError, 'invalid_token');
  });

  it('validate the request: name, role only for organization tokens, 1..365 days', async () => {
    const { core, alice } = await setup();
    await expectFailure(core.useCases.apiTokens.create(alice, { name: 'has space' }), ValidationError);
    await expectFailure(
      core.useCases.apiTokens.create(alice, { name: 'ci', role: 'viewer' }),
      ValidationError,
      'validation_failed',
    );
    for (const days of [0, 366, 1.5, '30']) {
      await expectFailure(
        core.useCases.apiTokens.create(alice, { name: 'ci', expires_in_days: days }),
        ValidationError,
      );
    }
    expect((await core.useCases.apiTokens.create(alice, { name: 'ci', expires_in_days: 365 })).expires_at).toBe(
      '2027-05-01T00:00:00.000Z',
    );
  });

  it('let no API token make or revoke tokens', async () => {
    const { core, alice } = await setup();
    const created = await core.useCases.apiTokens.create(alice, { name: 'ci' });
    const asToken = await core.useCases.apiTokens.authenticate(created.token);
    await expectFailure(core.useCases.apiTokens.create(asToken, { name: 'next' }), ForbiddenError, 'token_not_allowed');
    await expectFailure(core.useCases.apiTokens.revoke(asToken, created.id), ForbiddenError, 'token_not_allowed');
  });

  it("keep people's tokens apart", async () => {
    const { core, alice, bob } = await setup();
    const created = await core.useCases.apiTokens.create(alice, { name: 'ci' });
    expect((await core.useCases.apiTokens.list(bob, {})).items).toEqual([]);
    await expectFailure(core.useCases.apiTokens.revoke(bob, created.id), NotFoundError, 'token_not_found');
    await expectFailure(core.useCases.apiTokens.revoke(alice, UNKNOWN_ID), NotFoundError, 'token_not_found');
    expect((await core.useCases.apiTokens.list(alice, {})).items.map((token) => token.id)).toEqual([created.id]);
  });

  it('make organization tokens for admins only, capped at their role; the token dies with the membership', async () => {
    const { core, alice, bob } = await setup();
    const org = await core.useCases.orgs.create(alice, { name: 'platform' });
    await addAcceptedMember(core.useCases, alice, org.id, bob, 'operator');
    const bobsRole = await expectFailure(
      core.useCases.apiTokens.create(bob, { name: 'ci', org_id: org.id }),
      InsufficientRoleError,
    );
    expect(bobsRole).toMatchObject({ requiredRole: 'admin', role: 'operator' });
    const members = await core.useCases.orgs.listMembers(alice, org.id);
    const bobMember = members.items.find((member) => member.email === 'bob@example.com');
    await core.useCases.orgs.setMemberRole(alice, org.id, bobMember?.id, { role: 'admin' });
    const tooHigh = await expectFailure(
      core.useCases.apiTokens.create(bob, { name: 'ci', org_id: org.id, role: 'owner' }),
      InsufficientRoleError,
    );
    expect(tooHigh).toMatchObject({ requiredRole: 'owner', role: 'admin' });
    const created = await core.useCases.apiTokens.create(bob, { name: 'ci', org_id: org.id });
    expect(created).toMatchObject({ org_id: org.id, role: 'viewer' });
    expect((await core.useCases.apiTokens.authenticate(created.token)).apiToken).toEqual({
      id: created.id,
      orgId: org.id,
      role: 'viewer',
    });
    await core.useCases.orgs.removeMember(alice, org.id, bobMember?.id);
    await expectFailure(core.useCases.apiTokens.authenticate(created.token), UnauthorizedError, 'invalid_token');
  });
});
