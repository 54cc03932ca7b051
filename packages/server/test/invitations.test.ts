/**
 * Invitations (issue 23) over HTTP on SQLite and Postgres, with people signed in through the GitHub
 * sign-in against a stand-in on loopback: adding a member makes nobody a member; the invited person
 * sees the invitation and nothing of the organization until they accept; declining removes it;
 * nobody answers someone else's; an organization token answers none; an email that has not signed
 * in yet gets an invitation too, which waits for its first sign-in and an answer.
 */
import { TrellisApiError, type TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { type PeopleServer, type Person, startPeopleServer } from './support/people.js';

/** What a call came to: `ok`, or the problem's status and code. */
async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'ok';
  } catch (error) {
    if (error instanceof TrellisApiError) return `${error.status} ${error.code}`;
    throw error;
  }
}

describeEachDialect('invitations to organizations', (dialect) => {
  let people: PeopleServer;
  let ada: Person;
  let bob: Person;
  let orgId: string;

  beforeAll(async () => {
    people = await startPeopleServer(dialect);
    ada = await people.signIn('ada');
    bob = await people.signIn('bob');
    orgId = (await ada.client.createOrg(`platform-${dialect}`)).id;
  }, 60_000);
  afterAll(() => people?.close());

  /** Everything of the organization a non-member must not see, each as its outcome. */
  async function whatBobSees(client: TrellisClient): Promise<string[]> {
    return [
      await outcome(() => client.getOrg(orgId)),
      await outcome(() => client.listMembers(orgId)),
      await outcome(() => client.listVineyards({ orgId })),
      JSON.stringify((await client.listOrgs()).map((org) => org.id)),
    ];
  }

  it('makes an invitation of adding a signed-in person: they see nothing of the organization until they accept', async () => {
    await ada.client.createVineyard('production', { orgId });
    const member = await ada.client.addMember(orgId, { email: bob.email, role: 'operator' });
    const adaId = (await ada.client.whoami()).id;
    expect(member).toMatchObject({ status: 'pending', user_id: null, joined_at: null, invited_by: adaId });
    expect(await whatBobSees(bob.client)).toEqual([
      '404 org_not_found',
      '404 org_not_found',
      '404 org_not_found',
      '[]',
    ]);

    const invitations = await bob.client.listInvitations();
    expect(invitations).toEqual([
      {
        id: member.id,
        org_id: orgId,
        org_name: `platform-${dialect}`,
        role: 'operator',
        email: bob.email,
        invited_by: ada.email,
        created_at: member.created_at,
      },
    ]);
    expect(await ada.client.listInvitations()).toEqual([]);

    expect(await bob.client.acceptInvitation(member.id)).toMatchObject({ id: orgId, role: 'operator' });
    expect((await bob.client.getOrg(orgId)).role).toBe('operator');
    expect((await bob.client.listVineyards({ orgId })).map((vineyard) => vineyard.name)).toEqual(['production']);
    expect(await bob.client.listInvitations()).toEqual([]);
    const members = await ada.client.listMembers(orgId);
    expect(members.find((entry) => entry.id === member.id)).toMatchObject({
      status: 'active',
      joined_at: expect.any(String),
    });
    // Answered once: the id is no invitation any more.
    expect(await outcome(() => bob.client.acceptInvitation(member.id))).toBe('404 invitation_not_found');
    expect(await outcome(() => bob.client.declineInvitation(member.id))).toBe('404 invitation_not_found');
  });

  it("nobody answers someone else's invitation; declining removes it and it can be sent again", async () => {
    const cy = await people.signIn('cy');
    const invitation = await ada.client.addMember(orgId, { email: cy.email, role: 'viewer' });
    // bob (a member now) and a stranger can neither take nor decline cy's invitation.
    const eve = await people.signIn('eve');
    for (const other of [bob, eve]) {
      expect(await other.client.listInvitations()).toEqual([]);
      expect(await outcome(() => other.client.acceptInvitation(invitation.id))).toBe('404 invitation_not_found');
      expect(await outcome(() => other.client.declineInvitation(invitation.id))).toBe('404 invitation_not_found');
    }
    expect(await outcome(() => cy.client.acceptInvitation(crypto.randomUUID()))).toBe('404 invitation_not_found');
    expect(await outcome(() => cy.client.acceptInvitation('not-an-id'))).toBe('400 validation_failed');

    await cy.client.declineInvitation(invitation.id);
    expect(await cy.client.listInvitations()).toEqual([]);
    expect(await outcome(() => cy.client.getOrg(orgId))).toBe('404 org_not_found');
    expect((await ada.client.listMembers(orgId)).map((entry) => entry.email)).not.toContain(cy.email);
    const again = await ada.client.addMember(orgId, { email: cy.email, role: 'viewer' });
    expect((await cy.client.listInvitations()).map((entry) => entry.id)).toEqual([again.id]);

    const actions: string[] = [];
    for await (const entry of ada.client.auditEntries({ orgId })) actions.push(entry.action);
    expect(actions).toEqual(expect.arrayContaining(['member.add', 'member.accept', 'member.decline']));
  });

  it('an email that has never signed in gets an invitation that waits for its first sign-in and an answer', async () => {
    const invitation = await ada.client.addMember(orgId, { email: 'dan@example.test', role: 'admin' });
    expect(invitation).toMatchObject({ status: 'pending', user_id: null });
    const dan = await people.signIn('dan');
    expect(await whatBobSees(dan.client)).toEqual([
      '404 org_not_found',
      '404 org_not_found',
      '404 org_not_found',
      '[]',
    ]);
    expect((await dan.client.listInvitations()).map((entry) => [entry.id, entry.role])).toEqual([
      [invitation.id, 'admin'],
    ]);
    await dan.client.acceptInvitation(invitation.id);
    expect((await dan.client.getOrg(orgId)).role).toBe('admin');
  });

  it('an organization API token answers no invitation, even its creator’s', async () => {
    const fay = await people.signIn('fay');
    const other = await fay.client.createOrg(`elsewhere-${dialect}`);
    const { token } = await fay.client.createToken({ name: 'ci', org_id: other.id, role: 'admin' });
    const invitation = await ada.client.addMember(orgId, { email: fay.email, role: 'viewer' });
    const orgToken = people.withToken(token);
    expect(await outcome(() => orgToken.listInvitations())).toBe('403 org_token_not_allowed');
    expect(await outcome(() => orgToken.acceptInvitation(invitation.id))).toBe('403 org_token_not_allowed');
    expect(await outcome(() => orgToken.declineInvitation(invitation.id))).toBe('403 org_token_not_allowed');
    // A personal token is the person: it may.
    const { token: personal } = await fay.client.createToken({ name: 'laptop' });
    expect((await people.withToken(personal).listInvitations()).map((entry) => entry.id)).toEqual([invitation.id]);
  });
});
