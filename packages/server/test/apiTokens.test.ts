/**
 * API tokens for automation (issue 12) through the real control plane: made with a CLI login,
 * used as `Authorization: Bearer trt_…` on existing endpoints, listed without their secret,
 * revoked and expired (the server's clock is a fake one the test moves).
 */
import { createHash } from 'node:crypto';
import type { TrellisClient } from '@trellis/client';
import { FakeClock } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';
import { rawRows } from './support/rawRows.js';

const START = '2026-05-01T10:00:00.000Z';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

describeEachDialect('API tokens', (dialect) => {
  const clock = new FakeClock(START);
  let server: RunningControlPlane;
  let alice: TrellisClient;
  let aliceAccess: string;

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

  beforeAll(async () => {
    server = await startControlPlane(dialect, { clock });
    alice = await server.userClient('alice@example.com');
    aliceAccess = await server.accessToken('alice@example.com');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('makes a personal token shown once, which then works as a bearer token on existing endpoints', async () => {
    clock.set(START);
    const created = await alice.createToken({ name: 'ci-deploy' });
    expect(created).toMatchObject({
      name: 'ci-deploy',
      org_id: null,
      role: null,
      created_at: START,
      expires_at: null,
      last_used_at: null,
    });
    expect(created.token).toMatch(/^trt_[A-Za-z0-9_-]{43}$/);

    const whoami = await call('GET', '/api/cli/whoami', created.token);
    expect(whoami).toMatchObject({ status: 200, body: { email: 'alice@example.com' } });
    // Acting as alice: her vineyard made with the token is hers.
    const made = await call('POST', '/api/cli/vineyards', created.token, { name: 'from-ci' });
    expect(made.status).toBe(201);
    expect((await alice.listVineyards()).map((vineyard) => vineyard.name)).toContain('from-ci');

    // Only the SHA-256 is stored.
    const rows = await rawRows(server.database, 'SELECT token_hash, owner_id, created_by FROM api_tokens');
    const mine = rows.find((row) => row.token_hash === createHash('sha256').update(created.token).digest('hex'));
    expect(mine).toBeDefined();
    expect(JSON.stringify(rows)).not.toContain(created.token);
    expect(String(mine?.owner_id)).toBe(String(mine?.created_by));
  });

  it('lists tokens without the secret or its hash, with the last use recorded', async () => {
    clock.set(START);
    const created = await alice.createToken({ name: 'listed', expires_in_days: 30 });
    expect(created.expires_at).toBe('2026-05-31T10:00:00.000Z');
    clock.advance({ minutes: 5 });
    expect((await call('GET', '/api/cli/vineyards', created.token)).status).toBe(200);
    const usedAt = clock.now().toISOString();
    // Within the minute a second use does not move it; after it, it does.
    clock.advance({ seconds: 30 });
    expect((await call('GET', '/api/cli/vineyards', created.token)).status).toBe(200);
    let listed = await call('GET', '/api/tokens', aliceAccess);
    expect(listed.status).toBe(200);
    const tokens = listed.body.tokens as Record<string, unknown>[];
    const entry = tokens.find((token) => token.id === created.id);
    expect(entry).toEqual({
      id: created.id,
      name: 'listed',
      org_id: null,
      role: null,
      created_at: START,
      expires_at: '2026-05-31T10:00:00.000Z',
      last_used_at: usedAt,
    });
    const text = JSON.stringify(listed.body);
    expect(text).not.toContain('trt_');
    expect(text).not.toContain(createHash('sha256').update(created.token).digest('hex'));
    clock.advance({ seconds: 31 });
    expect((await call('GET', '/api/cli/vineyards', created.token)).status).toBe(200);
    listed = await call('GET', '/api/tokens', aliceAccess);
    const again = (listed.body.tokens as Record<string, unknown>[]).find((token) => token.id === created.id);
    expect(again?.last_used_at).toBe(clock.now().toISOString());
    // Another person does not see alice's tokens.
    const bobAccess = await server.accessToken('bob@example.com');
    const bobs = await call('GET', '/api/tokens', bobAccess);
    expect(bobs).toEqual({ status: 200, body: { tokens: [] } });
  });

  it('refuses a revoked token with 401 invalid_token, and it leaves the list', async () => {
    clock.set(START);
    const created = await alice.createToken({ name: 'to-revoke' });
    expect((await call('GET', '/api/cli/whoami', created.token)).status).toBe(200);
    // Another person cannot revoke it, nor learn that it exists.
    const bobAccess = await server.accessToken('bob@example.com');
    expect(await call('DELETE', `/api/tokens/${created.id}`, bobAccess)).toMatchObject({
      status: 404,
      body: { code: 'token_not_found' },
    });
    expect((await call('GET', '/api/cli/whoami', created.token)).status).toBe(200);

    await alice.revokeToken(created.id);
    expect(await call('GET', '/api/cli/whoami', created.token)).toMatchObject({
      status: 401,
      body: { code: 'invalid_token' },
    });
    expect((await alice.listTokens()).map((token) => token.id)).not.toContain(created.id);
    expect(await call('DELETE', `/api/tokens/${created.id}`, aliceAccess)).toMatchObject({
      status: 404,
      body: { code: 'token_not_found' },
    });
  });

  it('refuses an expired token with 401 invalid_token', async () => {
    clock.set(START);
    const created = await alice.createToken({ name: 'short-lived', expires_in_days: 1 });
    clock.advance({ hours: 23, minutes: 59 });
    expect((await call('GET', '/api/cli/whoami', created.token)).status).toBe(200);
    clock.advance({ minutes: 1 });
    expect(await call('GET', '/api/cli/whoami', created.token)).toMatchObject({
      status: 401,
      body: { code: 'invalid_token' },
    });
    clock.set(START);
  });

  it('refuses unknown and malformed API tokens alike', async () => {
    const unknown = `trt_${Buffer.alloc(32, 7).toString('base64url')}`;
    for (const token of [unknown, 'trt_short', `${unknown}x`]) {
      expect(await call('GET', '/api/cli/whoami', token)).toMatchObject({
        status: 401,
        body: { code: 'invalid_token' },
      });
    }
  });

  it('does not let an API token make or revoke tokens, nor a personal token take a role', async () => {
    clock.set(START);
    const created = await alice.createToken({ name: 'no-minting' });
    expect(await call('POST', '/api/tokens', created.token, { name: 'successor' })).toMatchObject({
      status: 403,
      body: { code: 'token_not_allowed' },
    });
    expect(await call('DELETE', `/api/tokens/${created.id}`, created.token)).toMatchObject({
      status: 403,
      body: { code: 'token_not_allowed' },
    });
    expect((await call('GET', '/api/tokens', created.token)).status).toBe(200);
    expect(await call('POST', '/api/tokens', aliceAccess, { name: 'with-role', role: 'admin' })).toMatchObject({
      status: 400,
      body: { code: 'validation_failed' },
    });
    expect(await call('POST', '/api/tokens', aliceAccess, { name: 'too-long', expires_in_days: 366 })).toMatchObject({
      status: 400,
      body: { code: 'validation_failed' },
    });
  });
});
