/**
 * The audit log (issue 14) through the real control plane on SQLite and Postgres: a full scenario
 * over HTTP (web sign-in, CLI login, a vineyard and a configuration, a job queued and cancelled, an
 * API token made and revoked, an organization with a member) leaves one entry per change, with
 * who acted, on what, the request's `X-Request-Id` and the client address (here through a
 * trusted proxy's `X-Forwarded-For`). An organization's log is for its admins and owners.
 */
import { deviceLoginTokens, FakeClock } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import {
  BOOTSTRAP_TOKEN,
  INLINE_MAIN_TF,
  type RunningControlPlane,
  startControlPlane,
} from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

interface Entry {
  id: string;
  at: string;
  actor: { type: string; id: string | null; email?: string };
  action: string;
  target: { type: string; id: string };
  owner_id: string;
  request_id: string | null;
  ip: string | null;
  details: Record<string, unknown>;
}

const CLIENT_IP = '203.0.113.7';

describeEachDialect('audit log', (dialect) => {
  let server: RunningControlPlane;
  let cookie: string;
  let access: string;
  let adminId: string;
  let seq = 0;
  const requestIds: Record<string, string> = {};

  /** A call as the admin's CLI (or `bearer`), with its own request id, from CLIENT_IP via the proxy. */
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    bearer = access,
    label?: string,
  ): Promise<Answer> => {
    seq += 1;
    const requestId = `${dialect}-req-${seq}`;
    if (label) requestIds[label] = requestId;
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${bearer}`,
        'X-Request-Id': requestId,
        'X-Forwarded-For': CLIENT_IP,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
      headers: response.headers,
    };
  };
  const entries = async (query = '', bearer = access): Promise<Entry[]> => {
    const answer = await call('GET', `/api/audit${query}`, undefined, bearer);
    expect(answer.status).toBe(200);
    return answer.body.entries as Entry[];
  };

  beforeAll(async () => {
    server = await startControlPlane(dialect, { env: { TRELLIS_TRUST_PROXY: 'loopback' } });
    // The web sign-in (the bootstrap link), from the client behind the proxy.
    const signIn = await fetch(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`, {
      redirect: 'manual',
      headers: { 'X-Request-Id': `${dialect}-sign-in`, 'X-Forwarded-For': CLIENT_IP },
    });
    expect(signIn.status).toBe(303);
    cookie = signIn.headers
      .getSetCookie()
      .map((header) => header.split(';')[0] as string)
      .find((pair) => pair.startsWith('trellis_session=')) as string;
    // `trellis login`: the browser approves the device code.
    access = (await deviceLoginTokens(server.url, cookie)).access_token;
    const me = await call('GET', '/api/cli/whoami');
    adminId = me.body.id as string;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('records every change of a full scenario with actor, target, request id and client address', async () => {
    const vineyard = await call('POST', '/api/cli/vineyards', { name: 'prod' }, access, 'vineyard');
    expect(vineyard.status).toBe(201);
    const vineyardId = vineyard.body.id as string;
    const vine = await call(
      'POST',
      '/api/cli/configurations',
      {
        name: 'web',
        vineyard_id: vineyardId,
        source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
        variables: { db_password: { value: 's3cret-value', sensitive: true } },
      },
      access,
      'vine',
    );
    expect(vine.status).toBe(201);
    const vineId = vine.body.id as string;
    const job = await call('POST', '/api/jobs', { configuration_id: vineId, job_type: 'PLAN' }, access, 'job');
    expect(job.status).toBe(201);
    const jobId = job.body.id as string;
    expect((await call('POST', `/api/cli/jobs/${jobId}/cancel`, undefined, access, 'cancel')).status).toBe(200);
    const token = await call('POST', '/api/tokens', { name: 'ci' }, access, 'token');
    expect(token.status).toBe(201);
    const tokenId = token.body.id as string;
    const secret = token.body.token as string;
    // The token acts: its entry names the token, and its creator's email.
    const byToken = await call('POST', '/api/cli/vineyards', { name: 'by-token' }, secret, 'byToken');
    expect(byToken.status).toBe(201);
    expect((await call('DELETE', `/api/tokens/${tokenId}`, undefined, access, 'revoke')).status).toBe(204);
    const org = await call('POST', '/api/orgs', { name: `team-${dialect}` }, access, 'org');
    expect(org.status).toBe(201);
    const orgId = org.body.id as string;
    const member = await call(
      'POST',
      `/api/orgs/${orgId}/members`,
      { email: 'vera@example.com', role: 'viewer' },
      access,
      'member',
    );
    expect(member.status).toBe(201);

    const admin = { type: 'user', id: adminId, email: 'admin@localhost' };
    const own = await entries();
    const expected = [
      { action: 'token.revoke', target: { type: 'token', id: tokenId }, request_id: requestIds.revoke, actor: admin },
      {
        action: 'vineyard.create',
        target: { type: 'vineyard', id: byToken.body.id },
        request_id: requestIds.byToken,
        actor: { type: 'token', id: tokenId, email: 'admin@localhost' },
      },
      { action: 'token.create', target: { type: 'token', id: tokenId }, request_id: requestIds.token, actor: admin },
      { action: 'job.cancel', target: { type: 'job', id: jobId }, request_id: requestIds.cancel, actor: admin },
      { action: 'job.create', target: { type: 'job', id: jobId }, request_id: requestIds.job, actor: admin },
      { action: 'vine.create', target: { type: 'vine', id: vineId }, request_id: requestIds.vine, actor: admin },
      {
        action: 'vineyard.create',
        target: { type: 'vineyard', id: vineyardId },
        request_id: requestIds.vineyard,
        actor: admin,
      },
      // The device login's requests came straight, not through the proxy.
      { action: 'cli_login.approve', target: { type: 'user', id: adminId }, actor: admin, ip: '127.0.0.1' },
      {
        action: 'session.sign_in',
        target: { type: 'user', id: adminId },
        request_id: `${dialect}-sign-in`,
        actor: admin,
        details: { method: 'bootstrap' },
      },
    ];
    expect(own).toMatchObject(expected.map((entry) => ({ ip: CLIENT_IP, ...entry, owner_id: adminId })));
    expect(own).toHaveLength(expected.length);
    // Details never hold secrets: not the token, not the sensitive variable.
    const serialized = JSON.stringify(own);
    expect(serialized).not.toContain(secret);
    expect(serialized).not.toContain('s3cret-value');
    expect(own.find((entry) => entry.action === 'job.create')?.details).toEqual({
      job_type: 'PLAN',
      vine_id: vineId,
      target_worker_id: null,
    });

    // The organization's log: its creation and the member added, for its owner.
    const ofOrg = await entries(`?org_id=${orgId}`);
    expect(ofOrg).toMatchObject([
      {
        action: 'member.add',
        owner_id: orgId,
        request_id: requestIds.member,
        ip: CLIENT_IP,
        details: { email: 'vera@example.com', role: 'viewer' },
      },
      { action: 'org.create', target: { type: 'org', id: orgId }, owner_id: orgId, request_id: requestIds.org },
    ]);
    // A viewer of the organization may not read it; a stranger does not see the organization.
    const vera = await server.accessToken('vera@example.com');
    // Issue 23: the invitation makes vera a viewer once she accepts it.
    const accepted = await call('POST', `/api/invitations/${member.body.id}/accept`, undefined, vera);
    expect(accepted).toMatchObject({ status: 200, body: { id: orgId, role: 'viewer' } });
    expect(await call('GET', `/api/audit?org_id=${orgId}`, undefined, vera)).toMatchObject({
      status: 403,
      body: { code: 'insufficient_role', required_role: 'admin', role: 'viewer' },
    });
    const nina = await server.accessToken('nina@example.com');
    expect(await call('GET', `/api/audit?org_id=${orgId}`, undefined, nina)).toMatchObject({
      status: 404,
      body: { code: 'org_not_found' },
    });
    // Nor does anyone else's personal log show: vera's own holds only her own CLI login.
    expect((await entries('', vera)).map((entry) => entry.action)).toEqual(['cli_login.approve']);

    // Filters, and pages that follow the Link header.
    expect((await entries('?action=job.cancel')).map((entry) => entry.target.id)).toEqual([jobId]);
    expect((await entries(`?target_id=${jobId}`)).map((entry) => entry.action)).toEqual(['job.cancel', 'job.create']);
    expect((await entries(`?actor=${tokenId}`)).map((entry) => entry.action)).toEqual(['vineyard.create']);
    const first = await call('GET', '/api/audit?limit=4');
    expect((first.body.entries as Entry[]).map((entry) => entry.id)).toEqual(own.slice(0, 4).map((entry) => entry.id));
    const link = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    expect(link).toBeDefined();
    const second = await call('GET', link as string);
    expect((second.body.entries as Entry[]).map((entry) => entry.id)).toEqual(own.slice(4, 8).map((entry) => entry.id));
    expect(await call('GET', '/api/audit?action=nonsense')).toMatchObject({ status: 400 });
  });

  it('a refused change leaves no entry', async () => {
    const before = await entries('?action=vineyard.create');
    expect((await call('POST', '/api/cli/vineyards', { name: 'prod' })).body).toMatchObject({
      code: 'vineyard_name_taken',
    });
    expect(await entries('?action=vineyard.create')).toEqual(before);
  });

  it('records the web sign-out and the CLI logout', async () => {
    const origin = new URL(server.url).origin;
    const tokens = await deviceLoginTokens(server.url, cookie);
    const logout = await fetch(`${server.url}/api/auth/cli/logout`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': `${dialect}-logout` },
      body: JSON.stringify({ refresh_token: tokens.refresh_token }),
    });
    expect(logout.status).toBe(204);
    const signOut = await fetch(`${server.url}/auth/signout`, {
      method: 'POST',
      headers: { cookie, origin, 'X-Request-Id': `${dialect}-sign-out` },
    });
    expect(signOut.status).toBe(204);
    expect((await entries('?limit=2')).map((entry) => [entry.action, entry.request_id])).toEqual([
      ['session.sign_out', `${dialect}-sign-out`],
      ['cli.logout', `${dialect}-logout`],
    ]);
  });
});

describeEachDialect('audit retention', (dialect) => {
  const clock = new FakeClock(new Date());
  let server: RunningControlPlane;

  beforeAll(async () => {
    server = await startControlPlane(dialect, {
      clock,
      env: { TRELLIS_AUDIT_RETENTION_DAYS: '2', TRELLIS_RETENTION_INTERVAL_S: '1' },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('deletes entries older than TRELLIS_AUDIT_RETENTION_DAYS on its own timer, and keeps newer ones', async () => {
    // Through the use cases: a CLI access token would expire as the clock moves days.
    const { useCases } = server.controlPlane;
    const user = await useCases.auth.ensureUser({ email: 'ada@example.com' });
    const ada = { userId: user.id, email: user.email };
    const old = await useCases.vineyards.create(ada, { name: 'old' });
    clock.advance({ hours: 24 * 2 - 1 });
    const recent = await useCases.vineyards.create(ada, { name: 'recent' });
    const targets = async () =>
      (await useCases.audit.list(ada, { action: 'vineyard.create' })).items.map((entry) => entry.target.id);
    expect(await targets()).toEqual([recent.id, old.id]);
    clock.advance({ hours: 2 });
    // The periodic task (every second here) does the pruning; this only waits to see it done.
    await vi.waitFor(async () => expect(await targets()).toEqual([recent.id]), { timeout: 30_000, interval: 200 });
  });
});
