/**
 * Organizations over HTTP on SQLite and Postgres (issue 12): real people signed in through a real
 * OpenID Provider (oidc-provider on loopback) and the CLI device login; each role tries every
 * action the API offers; non-members and removed members see nothing; agent pools claim only
 * their organization's jobs; members join by accepting their invitation (issue 23); the last owner stays.
 */
import { TrellisApiError, TrellisClient } from '@trellis/client';
import { INLINE_MAIN_TF, joinOrg } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestBrowser } from '../../providers/test/support/browser.js';
import { LocalOidcIssuer } from '../../providers/test/support/localOidcIssuer.js';
import { type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

const GOOGLE = { id: 'trellis-web', secret: 'secret-of-the-trellis-client-at-the-issuer' };
const ROLES = ['viewer', 'operator', 'admin', 'owner'] as const;
type Role = (typeof ROLES)[number];

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

describeEachDialect('organizations, roles and agent pools', (dialect) => {
  let issuer: LocalOidcIssuer;
  let server: RunningControlPlane;
  let web: string;

  beforeAll(async () => {
    issuer = await LocalOidcIssuer.listen();
    for (const name of ['ada', 'bob', 'cy', 'dan', 'eve']) {
      issuer.accounts.set(name, { email: `${name}@example.test`, email_verified: true, name });
    }
    server = await startControlPlane(dialect, {
      env: {
        TRELLIS_GOOGLE_CLIENT_ID: GOOGLE.id,
        TRELLIS_GOOGLE_CLIENT_SECRET: GOOGLE.secret,
        TRELLIS_GOOGLE_BASE_URL: issuer.issuer,
      },
    });
    web = server.controlPlane.config.webUrl;
    await issuer.configure({
      clientId: GOOGLE.id,
      clientSecret: GOOGLE.secret,
      redirectUri: `${web}/api/auth/callback`,
    });
  });
  afterAll(async () => {
    await server?.close();
    await issuer?.close();
  });

  /** Signs `account` in through the OpenID Provider, then logs the CLI in from that session. */
  async function signIn(account: string): Promise<{ client: TrellisClient; token: string }> {
    const browser = new TestBrowser();
    const started = await browser.request(`${web}/auth/signin/google`);
    expect(started.status).toBe(303);
    const callback = await issuer.authorize(browser, started.headers.get('location') as string, account);
    expect((await browser.request(callback)).status).toBe(303);
    const deviceCode = crypto.randomUUID();
    const generated = await browser.request(`${web}/api/auth/cli/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: new URL(web).origin },
      body: JSON.stringify({ device_code: deviceCode }),
    });
    expect(generated.status).toBe(201);
    const { verification_code } = (await generated.json()) as { verification_code: string };
    const tokens = await new TrellisClient({ baseUrl: web }).exchangeCliLogin({
      device_code: deviceCode,
      verification_code,
    });
    const token = tokens.access_token;
    return { client: new TrellisClient({ baseUrl: web, auth: { kind: 'bearer', accessToken: () => token } }), token };
  }

  function agent(registration: { worker_id: string; worker_token: string }): TrellisClient {
    return new TrellisClient({
      baseUrl: web,
      auth: { kind: 'worker', workerId: registration.worker_id, workerToken: registration.worker_token },
    });
  }

  let ada: TrellisClient;
  let bob: TrellisClient;
  let bobToken: string;
  let orgId: string;
  let bobMemberId: string;

  it('makes the creator the owner; invites a signed-in person and an unknown email alike, each joining by accepting', async () => {
    ada = (await signIn('ada')).client;
    ({ client: bob, token: bobToken } = await signIn('bob'));
    const org = await ada.createOrg('platform');
    expect(org).toEqual({ id: expect.any(String), name: 'platform', role: 'owner', created_at: expect.any(String) });
    orgId = org.id;
    expect(await outcome(() => bob.createOrg('platform'))).toBe('409 org_name_taken');
    const bobMember = await ada.addMember(orgId, { email: 'bob@example.test', role: 'viewer' });
    // Issue 23: an invitation, not a membership, until bob accepts it.
    expect(bobMember).toMatchObject({ status: 'pending', role: 'viewer', user_id: null, joined_at: null });
    expect(await outcome(() => bob.getOrg(orgId))).toBe('404 org_not_found');
    bobMemberId = bobMember.id;
    expect(await outcome(() => ada.addMember(orgId, { email: 'BOB@example.test', role: 'admin' }))).toBe(
      '409 member_exists',
    );
    await bob.acceptInvitation(bobMember.id);
    const pending = await ada.addMember(orgId, { email: 'cy@example.test', role: 'operator' });
    expect(pending).toMatchObject({ status: 'pending', user_id: null, joined_at: null });
    const cy = (await signIn('cy')).client;
    expect(await outcome(() => cy.getOrg(orgId))).toBe('404 org_not_found');
    await cy.acceptInvitation(pending.id);
    expect(await cy.getOrg(orgId)).toMatchObject({ id: orgId, role: 'operator' });
    const members = await bob.listMembers(orgId);
    expect(members.map((member) => [member.email, member.role, member.status])).toEqual([
      ['ada@example.test', 'owner', 'active'],
      ['bob@example.test', 'viewer', 'active'],
      ['cy@example.test', 'operator', 'active'],
    ]);
    expect((await bob.listOrgs()).map((listed) => [listed.name, listed.role])).toEqual([['platform', 'viewer']]);
  });

  describe.each(ROLES)('a member with the role %s', (role: Role) => {
    const at = (least: Role) => (ROLES.indexOf(role) >= ROLES.indexOf(least) ? 'ok' : '403 insufficient_role');

    it('may do what the role allows, and gets 403 insufficient_role for the rest', async () => {
      await ada.setMemberRole(orgId, bobMemberId, role);
      expect((await bob.getOrg(orgId)).role).toBe(role);
      // What an admin made, for everyone to read and act on.
      const tag = `${role}-${dialect}`;
      const vineyard = await ada.createVineyard(`yard-${tag}`, { orgId });
      const vine = await ada.createConfiguration({
        name: `net-${tag}`,
        project_name: `net-${tag}`,
        vineyard_id: vineyard.id,
        source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
      });
      const queued = await ada.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      const pool = await ada.registerWorker({ name: `pool-${tag}`, orgId });

      // read (every role)
      expect((await bob.listVineyards({ orgId })).map((item) => item.id)).toContain(vineyard.id);
      expect((await bob.getVineyard(vineyard.id)).owner_id).toBe(orgId);
      expect((await bob.getConfiguration(vine.id)).id).toBe(vine.id);
      expect((await bob.getConfiguration(`net-${tag}`)).id).toBe(vine.id);
      expect((await bob.getJob(queued.id)).owner_id).toBe(orgId);
      expect((await bob.getJobLogs(queued.id)).logs).toEqual([]);
      expect((await bob.listJobs({ orgId })).map((job) => job.id)).toContain(queued.id);
      expect((await bob.listWorkers({ orgId })).map((worker) => worker.id)).toContain(pool.worker_id);
      expect((await bob.getWorker(pool.worker_id)).owner_id).toBe(orgId);
      expect((await bob.listMembers(orgId)).length).toBeGreaterThanOrEqual(3);

      // jobs.run (operator)
      expect(await outcome(() => bob.cancelJob(queued.id))).toBe(at('operator'));
      expect(await outcome(() => bob.createJob({ job_type: 'PLAN', configuration_id: vine.id }))).toBe(at('operator'));
      // vineyards.manage (admin)
      expect(await outcome(() => bob.createVineyard(`bob-yard-${tag}`, { orgId }))).toBe(at('admin'));
      expect(
        await outcome(() =>
          bob.createConfiguration({
            name: `bob-net-${tag}`,
            project_name: `bob-net-${tag}`,
            vineyard_id: vineyard.id,
            source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
          }),
        ),
      ).toBe(at('admin'));
      // agents.manage (admin)
      expect(await outcome(() => bob.registerWorker({ name: `bob-pool-${tag}`, orgId }))).toBe(at('admin'));
      // members.manage (admin)
      const invited = `guest-${tag}@example.test`;
      expect(await outcome(() => bob.addMember(orgId, { email: invited, role: 'viewer' }))).toBe(at('admin'));
      const guest = (await ada.listMembers(orgId)).find((member) => member.email === invited);
      if (guest) expect(await outcome(() => bob.removeMember(orgId, guest.id))).toBe(at('admin'));
      // org.rename (admin)
      expect(await outcome(() => bob.renameOrg(orgId, 'platform'))).toBe(at('admin'));
      // owners.manage (owner)
      const second = `owner-${tag}@example.test`;
      expect(await outcome(() => bob.addMember(orgId, { email: second, role: 'owner' }))).toBe(at('owner'));
      const owner = (await ada.listMembers(orgId)).find((member) => member.email === second);
      if (owner) await ada.removeMember(orgId, owner.id);
      // org.delete (owner): a throwaway organization, so the suite's goes on.
      const throwaway = await ada.createOrg(`throwaway-${tag}`);
      await joinOrg(ada, bob, throwaway.id, 'bob@example.test', role);
      expect(await outcome(() => bob.deleteOrg(throwaway.id))).toBe(at('owner'));
      if (role !== 'owner') await ada.deleteOrg(throwaway.id);
      // Everything queued here is cancelled, so the organization stays deletable.
      for (const job of await ada.listJobs({ orgId, status: 'QUEUED' })) await ada.cancelJob(job.id);
    });
  });

  it('names the least role and the caller’s in the problem', async () => {
    await ada.setMemberRole(orgId, bobMemberId, 'viewer');
    const response = await fetch(`${web}/api/cli/vineyards`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bobToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'nope', org_id: orgId }),
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: 'insufficient_role', required_role: 'admin', role: 'viewer' });
  });

  it('a non-member and a removed member get 404 for everything of the organization', async () => {
    await ada.setMemberRole(orgId, bobMemberId, 'operator');
    const vineyard = await ada.createVineyard(`hidden-${dialect}`, { orgId });
    const vine = await ada.createConfiguration({
      name: `hidden-${dialect}`,
      project_name: `hidden-${dialect}`,
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    });
    const job = await bob.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const pool = await ada.registerWorker({ name: `hidden-${dialect}`, orgId });
    const dan = (await signIn('dan')).client;
    await ada.removeMember(orgId, bobMemberId);
    for (const outsider of [dan, bob]) {
      expect(await outcome(() => outsider.getOrg(orgId))).toBe('404 org_not_found');
      expect(await outcome(() => outsider.listMembers(orgId))).toBe('404 org_not_found');
      expect(await outcome(() => outsider.renameOrg(orgId, 'mine'))).toBe('404 org_not_found');
      expect(await outcome(() => outsider.deleteOrg(orgId))).toBe('404 org_not_found');
      expect(await outcome(() => outsider.addMember(orgId, { email: 'x@example.test', role: 'viewer' }))).toBe(
        '404 org_not_found',
      );
      expect(await outcome(() => outsider.getVineyard(vineyard.id))).toBe('404 vineyard_not_found');
      expect(await outcome(() => outsider.getConfiguration(vine.id))).toBe('404 configuration_not_found');
      expect(await outcome(() => outsider.getJob(job.id))).toBe('404 job_not_found');
      expect(await outcome(() => outsider.getJobLogs(job.id))).toBe('404 job_not_found');
      expect(await outcome(() => outsider.cancelJob(job.id))).toBe('404 job_not_found');
      expect(await outcome(() => outsider.getWorker(pool.worker_id))).toBe('404 worker_not_found');
      expect(await outcome(() => outsider.createVineyard('x', { orgId }))).toBe('404 org_not_found');
      expect(await outcome(() => outsider.registerWorker({ name: 'x', orgId }))).toBe('404 org_not_found');
      expect(await outcome(() => outsider.createJob({ job_type: 'PLAN', configuration_id: vine.id }))).toBe(
        '404 configuration_not_found',
      );
      expect(await outcome(() => outsider.listVineyards({ orgId }))).toBe('404 org_not_found');
      expect((await outsider.listVineyards()).map((item) => item.owner_id)).not.toContain(orgId);
      expect((await outsider.listJobs()).map((item) => item.owner_id)).not.toContain(orgId);
      expect((await outsider.listWorkers()).map((item) => item.owner_id)).not.toContain(orgId);
      expect((await outsider.listConfigurations()).map((item) => item.owner_id)).not.toContain(orgId);
      expect(await outsider.listOrgs()).toEqual([]);
    }
    await ada.cancelJob(job.id);
    bobMemberId = await joinOrg(ada, bob, orgId, 'bob@example.test', 'admin');
  });

  it('lists personal and organization records newest first, across owners, filtered by org_id', async () => {
    const personal = await bob.createVineyard(`mine-${dialect}`);
    const shared = await bob.createVineyard(`mine-${dialect}`, { orgId });
    const all = (await bob.listVineyardsPage({ limit: 1 })).items;
    expect(all.map((item) => item.id)).toEqual([shared.id]);
    const walked = await bob.listVineyards();
    expect(walked.slice(0, 2).map((item) => item.id)).toEqual([shared.id, personal.id]);
    expect((await bob.listVineyards({ orgId: 'personal' })).map((item) => item.owner_id)).toEqual([personal.owner_id]);
    expect(new Set((await bob.listVineyards({ orgId })).map((item) => item.owner_id))).toEqual(new Set([orgId]));
    expect(await outcome(() => bob.listVineyards({ orgId: 'everyone' }))).toBe('400 validation_failed');
    expect(await outcome(() => bob.listJobs({ orgId: crypto.randomUUID() }))).toBe('404 org_not_found');
  });

  it('an organization agent claims only its organization’s jobs; a personal agent never claims them', async () => {
    const orgVineyard = await bob.createVineyard(`pooled-${dialect}`, { orgId });
    const orgVine = await bob.createConfiguration({
      name: `pooled-${dialect}`,
      project_name: `pooled-${dialect}`,
      vineyard_id: orgVineyard.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    });
    const personalVineyard = await bob.createVineyard(`solo-${dialect}`);
    const personalVine = await bob.createConfiguration({
      name: `solo-${dialect}`,
      project_name: `solo-${dialect}`,
      vineyard_id: personalVineyard.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    });
    const pooled = await bob.registerWorker({ name: `pool-${dialect}`, orgId });
    const solo = await bob.registerWorker({ name: `solo-${dialect}` });
    expect(
      await outcome(() =>
        bob.createJob({ job_type: 'PLAN', configuration_id: orgVine.id, assigned_worker_id: solo.worker_id }),
      ),
    ).toBe('404 worker_not_found');
    const orgJob = await bob.createJob({ job_type: 'PLAN', configuration_id: orgVine.id });
    expect(orgJob.owner_id).toBe(orgId);
    expect(await agent(solo).claimJob()).toBeNull();
    const personalJob = await bob.createJob({ job_type: 'PLAN', configuration_id: personalVine.id });
    const claimedByPool = await agent(pooled).claimJob();
    expect(claimedByPool?.job.id).toBe(orgJob.id);
    expect(await agent(pooled).claimJob()).toBeNull();
    expect((await agent(solo).claimJob())?.job.id).toBe(personalJob.id);
    for (const job of [orgJob, personalJob]) await bob.cancelJob(job.id);
  });

  it('keeps the last owner, and refuses to delete an organization with a queued job (409 org_busy)', async () => {
    const adaMember = (await ada.listMembers(orgId)).find((member) => member.email === 'ada@example.test');
    expect(adaMember?.role).toBe('owner');
    expect(await outcome(() => ada.removeMember(orgId, adaMember?.id as string))).toBe('409 last_owner');
    expect(await outcome(() => ada.setMemberRole(orgId, adaMember?.id as string, 'admin'))).toBe('409 last_owner');
    expect(await outcome(() => bob.removeMember(orgId, adaMember?.id as string))).toBe('403 insufficient_role');
    const vineyard = await ada.createVineyard(`busy-${dialect}`, { orgId });
    const vine = await ada.createConfiguration({
      name: `busy-${dialect}`,
      project_name: `busy-${dialect}`,
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    });
    const job = await ada.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    expect(await outcome(() => ada.deleteOrg(orgId))).toBe('409 org_busy');
    await ada.cancelJob(job.id);
    // A second owner lets the first leave; the organization then goes, with its records.
    await ada.setMemberRole(orgId, bobMemberId, 'owner');
    await ada.removeMember(orgId, adaMember?.id as string);
    expect(await outcome(() => ada.getOrg(orgId))).toBe('404 org_not_found');
    await bob.deleteOrg(orgId);
    expect(await outcome(() => bob.getOrg(orgId))).toBe('404 org_not_found');
    expect(await outcome(() => bob.getVineyard(vineyard.id))).toBe('404 vineyard_not_found');
    expect(await outcome(() => bob.getJob(job.id))).toBe('404 job_not_found');
  });
});
