/**
 * Organization API tokens (issue 12) through the real control plane on SQLite and Postgres: who
 * may make them and with which role, that they act only within their organization with the lower
 * of their role and their creator's current role, and that they die with the creator's
 * membership. Organizations and members are set up through core's use cases (their HTTP routes
 * are another part of the issue); every token is then used over HTTP.
 */
import type { UserActor } from '@trellis/core';
import { addAcceptedMember } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

describeEachDialect('organization API tokens', (dialect) => {
  let server: RunningControlPlane;
  const people: Record<string, { actor: UserActor; access: string }> = {};
  let orgId: string;
  let otherOrgId: string;
  let orgVineyardId: string;
  let otherVineyardId: string;
  let personalVineyardId: string;

  const call = async (method: string, path: string, bearer: string, body?: unknown): Promise<Answer> => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${bearer}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  };
  const person = (name: string) => {
    const found = people[name];
    if (!found) throw new Error(`no ${name}`);
    return found;
  };
  const createToken = (who: string, body: Record<string, unknown>) =>
    call('POST', '/api/tokens', person(who).access, body);
  const memberIdOf = async (email: string): Promise<string> => {
    const page = await server.controlPlane.useCases.orgs.listMembers(person('olive').actor, orgId);
    const member = page.items.find((item) => item.email === email);
    if (!member) throw new Error(`${email} is no member`);
    return member.id;
  };

  beforeAll(async () => {
    server = await startControlPlane(dialect);
    for (const name of ['olive', 'adam', 'oscar', 'vera', 'nina']) {
      const email = `${name}@example.com`;
      const access = await server.accessToken(email);
      const client = await server.userClient(email);
      const me = await client.whoami();
      people[name] = { actor: { userId: me.id, email }, access };
    }
    const orgs = server.controlPlane.useCases.orgs;
    const olive = person('olive').actor;
    orgId = (await orgs.create(olive, { name: `platform-${dialect}` })).id;
    otherOrgId = (await orgs.create(olive, { name: `elsewhere-${dialect}` })).id;
    const useCases = server.controlPlane.useCases;
    await addAcceptedMember(useCases, olive, orgId, person('adam').actor, 'admin');
    await addAcceptedMember(useCases, olive, orgId, person('oscar').actor, 'operator');
    await addAcceptedMember(useCases, olive, orgId, person('vera').actor, 'viewer');
    const vineyards = server.controlPlane.useCases.vineyards;
    orgVineyardId = (await vineyards.create(olive, { name: 'org-yard', org_id: orgId })).id;
    otherVineyardId = (await vineyards.create(olive, { name: 'other-yard', org_id: otherOrgId })).id;
    personalVineyardId = (await vineyards.create(person('adam').actor, { name: 'adams-own' })).id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('only those who may manage tokens make organization tokens, never above their own role', async () => {
    for (const who of ['oscar', 'vera']) {
      expect(await createToken(who, { name: 'nope', org_id: orgId })).toMatchObject({
        status: 403,
        body: { code: 'insufficient_role', required_role: 'admin' },
      });
    }
    expect(await createToken('nina', { name: 'nope', org_id: orgId })).toMatchObject({
      status: 404,
      body: { code: 'org_not_found' },
    });
    expect(await createToken('adam', { name: 'too-high', org_id: orgId, role: 'owner' })).toMatchObject({
      status: 403,
      body: { code: 'insufficient_role', required_role: 'owner', role: 'admin' },
    });
    const fallback = await createToken('adam', { name: 'default-role', org_id: orgId });
    expect(fallback).toMatchObject({ status: 201, body: { org_id: orgId, role: 'viewer' } });
    const operator = await createToken('adam', { name: 'deployer', org_id: orgId, role: 'operator' });
    expect(operator).toMatchObject({ status: 201, body: { org_id: orgId, role: 'operator' } });
    const owner = await createToken('olive', { name: 'owner-token', org_id: orgId, role: 'owner' });
    expect(owner).toMatchObject({ status: 201, body: { role: 'owner' } });
  });

  it('an organization token sees only its organization, with its role', async () => {
    const created = await createToken('adam', { name: 'reader', org_id: orgId, role: 'viewer' });
    const token = created.body.token as string;
    const listed = await call('GET', '/api/cli/vineyards', token);
    expect(listed.status).toBe(200);
    const ids = (listed.body.vineyards as { id: string }[]).map((vineyard) => vineyard.id);
    // The org's vineyard; not the creator's personal one, not another org's.
    expect(ids).toEqual([orgVineyardId]);
    expect((await call('GET', `/api/cli/vineyards/${orgVineyardId}`, token)).status).toBe(200);
    expect((await call('GET', `/api/cli/vineyards/${personalVineyardId}`, token)).status).toBe(404);
    expect((await call('GET', `/api/cli/vineyards/${otherVineyardId}`, token)).status).toBe(404);
    // A viewer token may not manage vineyards, though its creator may.
    expect(await call('POST', '/api/cli/vineyards', token, { name: 'by-viewer-token' })).toMatchObject({
      status: 403,
      body: { code: 'insufficient_role', required_role: 'admin', role: 'viewer' },
    });
    // Nor list the organization's tokens, nor another organization's.
    expect(await call('GET', `/api/tokens?org_id=${orgId}`, token)).toMatchObject({
      status: 403,
      body: { code: 'insufficient_role' },
    });
    expect(await call('GET', `/api/tokens?org_id=${otherOrgId}`, token)).toMatchObject({
      status: 403,
      body: { code: 'token_not_allowed' },
    });
  });

  it("acts with the lower of its role and its creator's current role, and dies with the membership", async () => {
    const created = await createToken('adam', { name: 'manager', org_id: orgId, role: 'admin' });
    const token = created.body.token as string;
    expect(await call('POST', '/api/cli/vineyards', token, { name: 'by-admin-token' })).toMatchObject({ status: 201 });
    const orgs = server.controlPlane.useCases.orgs;
    const adam = await memberIdOf('adam@example.com');
    await orgs.setMemberRole(person('olive').actor, orgId, adam, { role: 'viewer' });
    expect(await call('POST', '/api/cli/vineyards', token, { name: 'after-demotion' })).toMatchObject({
      status: 403,
      body: { code: 'insufficient_role', role: 'viewer' },
    });
    expect((await call('GET', '/api/cli/vineyards', token)).status).toBe(200);
    await orgs.removeMember(person('olive').actor, orgId, adam);
    expect(await call('GET', '/api/cli/vineyards', token)).toMatchObject({
      status: 401,
      body: { code: 'invalid_token' },
    });
    await addAcceptedMember(server.controlPlane.useCases, person('olive').actor, orgId, person('adam').actor, 'admin');
  });

  it("lists the organization's tokens for its admins only, and lets them revoke any of them", async () => {
    const mine = await createToken('olive', { name: 'olives-ci', org_id: orgId, role: 'operator' });
    const token = mine.body.token as string;
    const adminList = await call('GET', `/api/tokens?org_id=${orgId}`, person('adam').access);
    expect(adminList.status).toBe(200);
    expect((adminList.body.tokens as { id: string }[]).map((entry) => entry.id)).toContain(mine.body.id);
    expect(JSON.stringify(adminList.body)).not.toContain('trt_');
    expect(await call('GET', `/api/tokens?org_id=${orgId}`, person('oscar').access)).toMatchObject({
      status: 403,
      body: { code: 'insufficient_role' },
    });
    expect(await call('GET', `/api/tokens?org_id=${orgId}`, person('nina').access)).toMatchObject({
      status: 404,
      body: { code: 'org_not_found' },
    });
    // Not in the creator's personal list.
    const personal = await call('GET', '/api/tokens', person('olive').access);
    expect((personal.body.tokens as { id: string }[]).map((entry) => entry.id)).not.toContain(mine.body.id);

    // An operator cannot revoke another member's token; a non-member cannot find it; an admin can.
    expect(await call('DELETE', `/api/tokens/${mine.body.id}`, person('oscar').access)).toMatchObject({
      status: 403,
      body: { code: 'insufficient_role' },
    });
    expect(await call('DELETE', `/api/tokens/${mine.body.id}`, person('nina').access)).toMatchObject({
      status: 404,
      body: { code: 'token_not_found' },
    });
    expect((await call('GET', '/api/cli/whoami', token)).status).toBe(200);
    expect((await call('DELETE', `/api/tokens/${mine.body.id}`, person('adam').access)).status).toBe(204);
    expect(await call('GET', '/api/cli/whoami', token)).toMatchObject({ status: 401, body: { code: 'invalid_token' } });

    // A creator may revoke their own organization token whatever their role now.
    const own = await createToken('adam', { name: 'adams-ci', org_id: orgId });
    await server.controlPlane.useCases.orgs.setMemberRole(
      person('olive').actor,
      orgId,
      await memberIdOf('adam@example.com'),
      { role: 'viewer' },
    );
    expect((await call('DELETE', `/api/tokens/${own.body.id}`, person('adam').access)).status).toBe(204);
  });
});
