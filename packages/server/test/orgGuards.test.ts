/**
 * Organizations' guards (issue 23) over HTTP on SQLite and Postgres, with people signed in through
 * the GitHub sign-in against a stand-in on loopback: an organization API token does only what its
 * organization's records allow (no new organizations, no use of its creator's GitHub sign-in);
 * deleting an organization deletes everything it owns, its notifications, policies and tokens
 * too; and on Postgres two owners demoting each other at the same moment leave one owner.
 */
import { TrellisApiError, TrellisClient } from '@trellis/client';
import { INLINE_MAIN_TF, joinOrg } from '@trellis/testkit';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect, describePostgres } from './support/dialects.js';
import { type PeopleServer, type Person, startPeopleServer } from './support/people.js';
import { rawRows } from './support/rawRows.js';

async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'ok';
  } catch (error) {
    if (error instanceof TrellisApiError) return `${error.status} ${error.code}`;
    throw error;
  }
}

const POLICY = 'package trellis\n\ndeny contains msg if {\n  false\n  msg := "never"\n}\n';

describeEachDialect('organization tokens and deleting an organization', (dialect) => {
  let people: PeopleServer;
  let ada: Person;

  beforeAll(async () => {
    people = await startPeopleServer(dialect, { env: { TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS: 'true' } });
    ada = await people.signIn('ada', ['ada/infra', 'ada/private-notes']);
  }, 60_000);
  afterAll(() => people?.close());

  it("refuses an organization token what only a person does: new organizations, the creator's repositories and GitHub hooks", async () => {
    const org = await ada.client.createOrg(`tokens-${dialect}`);
    const { token } = await ada.client.createToken({ name: 'ci', org_id: org.id, role: 'admin' });
    const orgToken = people.withToken(token);
    // Its own organization's records: yes.
    const vineyard = await orgToken.createVineyard('production', { orgId: org.id });
    const vine = await orgToken.createConfiguration({
      name: 'network',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    });
    // What only a person does: no.
    expect(await outcome(() => orgToken.createOrg(`minted-${dialect}`))).toBe('403 org_token_not_allowed');
    expect(await outcome(() => orgToken.listRepositories('github'))).toBe('403 org_token_not_allowed');
    expect(
      await outcome(() =>
        orgToken.connectRepository(vine.id, { provider: 'github', repository: 'ada/infra', branch: 'main' }),
      ),
    ).toBe('403 org_token_not_allowed');
    // A manual webhook needs no sign-in: it may.
    const manual = await orgToken.connectRepository(vine.id, {
      provider: 'github',
      repository: 'ada/infra',
      branch: 'main',
      webhook: 'manual',
    });
    expect(manual.webhook_mode).toBe('manual');
    const seenByGitHub = people.github.requests.length;
    expect(await outcome(() => orgToken.listRepositories('github'))).toBe('403 org_token_not_allowed');
    expect(people.github.requests.length).toBe(seenByGitHub);
    expect((await ada.client.listOrgs()).map((listed) => listed.name)).not.toContain(`minted-${dialect}`);
    // The person, and a personal token (which is the person), may.
    expect((await ada.client.listRepositories('github')).map((repository) => repository.full_name)).toEqual([
      'ada/infra',
      'ada/private-notes',
    ]);
    const { token: personal } = await ada.client.createToken({ name: 'laptop' });
    expect((await people.withToken(personal).listRepositories('github')).length).toBe(2);
    expect(await people.withToken(personal).createOrg(`personal-${dialect}`)).toMatchObject({ role: 'owner' });
  });

  it('deleting an organization deletes its notifications, policies, API tokens, agents and connections too', async () => {
    const org = await ada.client.createOrg(`doomed-${dialect}`);
    const bob = await people.signIn('bob');
    await joinOrg(ada.client, bob.client, org.id, bob.email, 'viewer');
    const vineyard = await ada.client.createVineyard('production', { orgId: org.id });
    const vine = await ada.client.createConfiguration({
      name: 'network',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    });
    const notification = await ada.client.createNotification({
      name: 'ops',
      kind: 'slack',
      url: 'http://127.0.0.1:9/services/T000/B000/secret-part',
      events: ['job.failed'],
      org_id: org.id,
    });
    const policy = await ada.client.createPolicy({
      name: 'nothing',
      enforcement: 'mandatory',
      module: POLICY,
      org_id: org.id,
    });
    const { token } = await ada.client.createToken({ name: 'ci', org_id: org.id, role: 'viewer' });
    const pool = await ada.client.registerWorker({ name: 'pool', orgId: org.id });
    const agent = new TrellisClient({
      baseUrl: people.web,
      auth: { kind: 'worker', workerId: pool.worker_id, workerToken: pool.worker_token },
    });
    await agent.heartbeat('1.0.0');
    await ada.client.connectRepository(vine.id, {
      provider: 'github',
      repository: 'ada/infra',
      branch: 'main',
      webhook: 'manual',
    });
    const owned = async () => {
      const counts: Record<string, number> = {};
      for (const table of [
        'notifications',
        'policies',
        'policy_versions',
        'api_tokens',
        'workers',
        'vines',
        'vcs_connections',
      ]) {
        const rows = await rawRows(people.server.database, `SELECT owner_id FROM ${table}`);
        counts[table] = rows.filter((row) => String(row.owner_id) === org.id).length;
      }
      counts.org_members = (await rawRows(people.server.database, 'SELECT org_id FROM org_members')).filter(
        (row) => String(row.org_id) === org.id,
      ).length;
      return counts;
    };
    expect(await owned()).toEqual({
      notifications: 1,
      policies: 1,
      policy_versions: 1,
      api_tokens: 1,
      workers: 1,
      vines: 1,
      vcs_connections: 1,
      org_members: 2,
    });

    expect(await outcome(() => bob.client.deleteOrg(org.id))).toBe('403 insufficient_role');
    await ada.client.deleteOrg(org.id);

    expect(await owned()).toEqual({
      notifications: 0,
      policies: 0,
      policy_versions: 0,
      api_tokens: 0,
      workers: 0,
      vines: 0,
      vcs_connections: 0,
      org_members: 0,
    });
    expect(await outcome(() => ada.client.getNotification(notification.id))).toBe('404 notification_not_found');
    expect(await outcome(() => ada.client.getPolicy(policy.id))).toBe('404 policy_not_found');
    expect(await outcome(() => people.withToken(token).listVineyards())).toBe('401 invalid_token');
    expect(await outcome(() => agent.heartbeat('1.0.0'))).toBe('401 invalid_worker_credentials');
    // The deletion is in the person's own log, with what went.
    const entries = [];
    for await (const entry of ada.client.auditEntries({ orgId: 'personal', action: 'org.delete' })) entries.push(entry);
    expect(entries[0]).toMatchObject({
      target: { type: 'org', id: org.id },
      details: { name: `doomed-${dialect}`, vines: 1, notifications: 1, policies: 1, api_tokens: 1, workers: 1 },
    });
    // The name is free again, and the new organization starts empty.
    const again = await ada.client.createOrg(`doomed-${dialect}`);
    expect(await ada.client.listNotifications({ orgId: again.id })).toEqual([]);
    expect(await ada.client.listPolicies({ orgId: again.id })).toEqual([]);
    expect(await ada.client.listTokens({ orgId: again.id })).toEqual([]);
  });
});

describePostgres('two owners demoting each other at once on Postgres', () => {
  let people: PeopleServer;

  beforeAll(async () => {
    people = await startPeopleServer('postgres');
  }, 60_000);
  afterAll(() => people?.close());

  /** How many sessions of the test database wait for a lock. */
  async function waiting(client: pg.Client): Promise<number> {
    const { rows } = await client.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return (rows[0] as { n: number }).n;
  }

  it('leaves the organization one owner: one demotion wins, the other is 409 last_owner', async () => {
    const ada = await people.signIn('ada');
    const bob = await people.signIn('bob');
    const org = await ada.client.createOrg('two-owners');
    const bobMember = await joinOrg(ada.client, bob.client, org.id, bob.email, 'owner');
    const adaMember = (await ada.client.listMembers(org.id)).find((member) => member.email === ada.email)?.id as string;

    // Both demotions are held at the same point of their transactions (the audit entry each writes
    // after changing the role), so they overlap for sure; then they go on together.
    const holder = new pg.Client({ connectionString: people.server.database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE audit_entries IN SHARE MODE');
      const demotions = [
        outcome(() => ada.client.setMemberRole(org.id, bobMember, 'admin')),
        outcome(() => bob.client.setMemberRole(org.id, adaMember, 'admin')),
      ];
      for (let i = 0; i < 500 && (await waiting(holder)) < 2; i++) await new Promise((done) => setTimeout(done, 20));
      expect(await waiting(holder)).toBe(2);
      await holder.query('COMMIT');
      const results = (await Promise.all(demotions)).sort();
      expect(results).toEqual(['409 last_owner', 'ok']);
    } finally {
      await holder.end();
    }
    const owners = (await ada.client.listMembers(org.id).catch(() => bob.client.listMembers(org.id))).filter(
      (member) => member.role === 'owner',
    );
    expect(owners).toHaveLength(1);
  });
});
