import { TOKEN_AUDIENCE, TOKEN_ISSUER } from '@trellis/core';
import jwt from 'jsonwebtoken';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ApiHarness,
  BOOTSTRAP_TOKEN,
  cliTokens,
  JWT_SECRET,
  json,
  signIn,
  startApi,
  WEB_ORIGIN,
} from './harness.js';

let api: ApiHarness;
beforeEach(async () => {
  api = await startApi();
});
afterEach(async () => {
  await api.close();
});

async function problemOf(response: Response) {
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await response.json()) as { status: number; code: string; detail: string };
}

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('CLI bearer tokens', () => {
  const whoami = (token: string) =>
    fetch(`${api.url}/api/cli/whoami`, { headers: { authorization: `Bearer ${token}` } });

  it('accepts a valid access token', async () => {
    const { access_token } = await cliTokens(api);
    const response = await whoami(access_token);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ email: 'admin@localhost' });
  });

  it('refuses a missing token', async () => {
    const response = await fetch(`${api.url}/api/cli/vineyards`);
    expect(response.status).toBe(401);
    expect((await problemOf(response)).code).toBe('unauthenticated');
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('refuses garbage and a token signed with another secret', async () => {
    expect((await whoami('not-a-jwt')).status).toBe(401);
    const forged = jwt.sign(
      { sub: crypto.randomUUID(), email: 'x@y', type: 'access', exp: Math.floor(Date.now() / 1000) + 60 },
      'another-secret-another-secret-another-secret',
      { issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE },
    );
    expect((await problemOf(await whoami(forged))).code).toBe('invalid_token');
  });

  it('refuses an expired token', async () => {
    const { access_token } = await cliTokens(api);
    api.core.clock.advance({ seconds: 3601 });
    const problem = await problemOf(await whoami(access_token));
    expect(problem.status).toBe(401);
    expect(problem.code).toBe('token_expired');
  });

  it('refuses alg:none', async () => {
    const { access_token } = await cliTokens(api);
    const payload = access_token.split('.')[1] as string;
    const unsigned = `${base64url({ alg: 'none', typ: 'JWT' })}.${payload}.`;
    expect((await whoami(unsigned)).status).toBe(401);
  });

  it('refuses a wrong issuer or audience', async () => {
    const claims = { sub: crypto.randomUUID(), email: 'a@b', type: 'access', exp: Math.floor(Date.now() / 1000) + 600 };
    const wrongIss = jwt.sign(claims, JWT_SECRET, { issuer: 'someone-else', audience: TOKEN_AUDIENCE });
    const wrongAud = jwt.sign(claims, JWT_SECRET, { issuer: TOKEN_ISSUER, audience: 'another-app' });
    expect((await whoami(wrongIss)).status).toBe(401);
    expect((await whoami(wrongAud)).status).toBe(401);
    const right = jwt.sign(claims, JWT_SECRET, { issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE });
    expect((await whoami(right)).status).toBe(200);
  });

  it('refuses a refresh token used as an access token', async () => {
    const { refresh_token } = await cliTokens(api);
    expect((await problemOf(await whoami(refresh_token))).code).toBe('invalid_token');
  });

  it('rotates on refresh and revokes the family when an old refresh token is reused', async () => {
    const first = await cliTokens(api);
    const rotated = await fetch(`${api.url}/api/auth/cli/refresh`, json({ refresh_token: first.refresh_token }));
    expect(rotated.status).toBe(200);
    const second = (await rotated.json()) as { access_token: string; refresh_token: string };
    expect(second.refresh_token).not.toBe(first.refresh_token);

    const reuse = await fetch(`${api.url}/api/auth/cli/refresh`, json({ refresh_token: first.refresh_token }));
    expect((await problemOf(reuse)).code).toBe('invalid_grant');
    const afterReuse = await fetch(`${api.url}/api/auth/cli/refresh`, json({ refresh_token: second.refresh_token }));
    expect(afterReuse.status).toBe(401);
  });

  it('rate-limits the exchange endpoint with Retry-After', async () => {
    const body = { device_code: crypto.randomUUID(), verification_code: 'BCDFGH' };
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) statuses.push((await fetch(`${api.url}/api/auth/cli/exchange`, json(body))).status);
    expect(statuses.slice(0, 20).every((s) => s === 400)).toBe(true);
    const limited = await fetch(`${api.url}/api/auth/cli/exchange`, json(body));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await problemOf(limited)).code).toBe('rate_limited');
  });
});

describe('agent credentials', () => {
  async function registered() {
    const { access_token } = await cliTokens(api);
    const response = await fetch(
      `${api.url}/api/workers/register`,
      json({ name: 'agent-1' }, { authorization: `Bearer ${access_token}` }),
    );
    expect(response.status).toBe(201);
    return { access_token, ...((await response.json()) as { worker_id: string; worker_token: string }) };
  }
  const heartbeat = (headers: Record<string, string>) =>
    fetch(`${api.url}/api/workers/heartbeat`, json({ version: '1.0.0' }, headers));

  it('accepts the right id and token', async () => {
    const { worker_id, worker_token } = await registered();
    const response = await heartbeat({ 'x-worker-id': worker_id, 'x-worker-token': worker_token });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ cancel_job_ids: [], heartbeat_interval_s: 30, lost_job_timeout_s: 120 });
  });

  it('answers 401 to a missing, wrong or borrowed credential', async () => {
    const a = await registered();
    const b = await registered();
    const cases: Record<string, string>[] = [
      {},
      { 'x-worker-id': a.worker_id },
      { 'x-worker-id': a.worker_id, 'x-worker-token': `${a.worker_token}x` },
      { 'x-worker-id': b.worker_id, 'x-worker-token': a.worker_token },
      { 'x-worker-id': 'not-a-uuid', 'x-worker-token': a.worker_token },
      { 'x-worker-id': crypto.randomUUID(), 'x-worker-token': a.worker_token },
    ];
    for (const headers of cases) {
      const response = await heartbeat(headers);
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect((await problemOf(response)).code).toBe('invalid_worker_credentials');
    }
  });

  it('refuses registration without a user token', async () => {
    const response = await fetch(`${api.url}/api/workers/register`, json({ name: 'x' }));
    expect(response.status).toBe(401);
  });

  it('never returns the token hash', async () => {
    const { access_token, worker_id } = await registered();
    const text = await (
      await fetch(`${api.url}/api/cli/workers/${worker_id}`, { headers: { authorization: `Bearer ${access_token}` } })
    ).text();
    expect(text).not.toMatch(/token_hash/);
    const list = await (
      await fetch(`${api.url}/api/cli/workers`, { headers: { authorization: `Bearer ${access_token}` } })
    ).text();
    expect(list).not.toMatch(/token_hash/);
  });
});

describe('release secret', () => {
  const publish = (headers: Record<string, string>, url = api.url) =>
    fetch(`${url}/api/releases/worker`, json({ version: '1.2.3', release_notes: 'notes' }, headers));

  it('publishes with the right secret only', async () => {
    expect((await publish({})).status).toBe(401);
    expect((await publish({ authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await publish({ authorization: 'Bearer release-secret' })).status).toBe(201);
    const duplicate = await publish({ authorization: 'Bearer release-secret' });
    expect((await problemOf(duplicate)).code).toBe('release_exists');
  });

  it('answers 503 when RELEASE_API_SECRET is unset', async () => {
    const disabled = await startApi({ releaseApiSecret: null });
    try {
      const response = await publish({ authorization: 'Bearer anything' }, disabled.url);
      expect(response.status).toBe(503);
      expect((await problemOf(response)).code).toBe('release_api_disabled');
    } finally {
      await disabled.close();
    }
  });
});

describe('web session', () => {
  it('signs in through the bootstrap link with an HTTP-only, SameSite=Lax cookie', async () => {
    const response = await fetch(`${api.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}&next=/jobs`, {
      redirect: 'manual',
    });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/jobs');
    const cookie = response.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^trellis_session=/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toMatch(/Secure/i);
  });

  it('refuses a wrong bootstrap token and an off-site redirect target', async () => {
    expect((await fetch(`${api.url}/auth/bootstrap?token=nope`, { redirect: 'manual' })).status).toBe(401);
    const offsite = await fetch(`${api.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}&next=//evil.example`, {
      redirect: 'manual',
    });
    expect(offsite.headers.get('location')).toBe('/');
  });

  it('refuses a redirect target with control characters, which a browser would turn into //host', async () => {
    for (const next of ['/\t/evil.example', '/\n/evil.example', '/a\u0000b']) {
      const response = await fetch(
        `${api.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}&next=${encodeURIComponent(next)}`,
        { redirect: 'manual' },
      );
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toBe('/');
    }
  });

  it('uses a one-time bootstrap token only once', async () => {
    const oneTime = await startApi({ oneTimeBootstrap: true });
    try {
      const first = await fetch(`${oneTime.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`, { redirect: 'manual' });
      const second = await fetch(`${oneTime.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`, { redirect: 'manual' });
      expect([first.status, second.status]).toEqual([303, 401]);
    } finally {
      await oneTime.close();
    }
  });

  it('uses the __Host- prefix and Secure over https', async () => {
    const secure = await startApi({ webOrigin: 'https://trellis.example.com' });
    try {
      const response = await fetch(`${secure.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`, { redirect: 'manual' });
      const cookie = response.headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(/^__Host-trellis_session=/);
      expect(cookie).toMatch(/; Secure/i);
      expect(cookie).toMatch(/Path=\//);
    } finally {
      await secure.close();
    }
  });

  it('refreshes the cookie on every request and ends after the idle timeout', async () => {
    const cookie = await signIn(api);
    const first = await fetch(`${api.url}/api/cli/vineyards`, { headers: { cookie } });
    expect(first.status).toBe(200);
    expect(first.headers.get('set-cookie')).toMatch(/^trellis_session=/);
    // Sliding: 50 minutes later with the refreshed cookie still works; the original one too.
    api.core.clock.advance({ seconds: 3000 });
    const refreshed = (first.headers.get('set-cookie') ?? '').split(';')[0] as string;
    expect((await fetch(`${api.url}/api/cli/vineyards`, { headers: { cookie: refreshed } })).status).toBe(200);
    // Past the idle timeout of the original cookie, it is refused.
    api.core.clock.advance({ seconds: 700 });
    expect((await fetch(`${api.url}/api/cli/vineyards`, { headers: { cookie } })).status).toBe(401);
  });

  it('ends a session at the absolute timeout however active', async () => {
    let cookie = await signIn(api);
    for (let i = 0; i < 5; i++) {
      api.core.clock.advance({ seconds: 3000 });
      const response = await fetch(`${api.url}/api/cli/vineyards`, { headers: { cookie } });
      if (i < 4) {
        expect(response.status).toBe(200);
        cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] as string;
      } else {
        expect(response.status).toBe(401);
      }
    }
  });

  it('requires the web Origin on cookie-authenticated writes (CSRF)', async () => {
    const cookie = await signIn(api);
    const body = { device_code: crypto.randomUUID() };
    const noOrigin = await fetch(`${api.url}/api/auth/cli/generate`, json(body, { cookie }));
    expect((await problemOf(noOrigin)).code).toBe('csrf_rejected');
    const wrongOrigin = await fetch(
      `${api.url}/api/auth/cli/generate`,
      json(body, { cookie, origin: 'https://evil.example' }),
    );
    expect(wrongOrigin.status).toBe(403);
    const ok = await fetch(`${api.url}/api/auth/cli/generate`, json(body, { cookie, origin: WEB_ORIGIN }));
    expect(ok.status).toBe(201);
    const generated = (await ok.json()) as { verification_code: string };
    expect(generated.verification_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{6}$/);
    const again = await fetch(`${api.url}/api/auth/cli/generate`, json(body, { cookie, origin: WEB_ORIGIN }));
    expect((await problemOf(again)).code).toBe('device_code_used');
  });

  it('does not accept a CLI bearer token where a web session is required', async () => {
    const { access_token } = await cliTokens(api);
    const response = await fetch(
      `${api.url}/api/auth/cli/generate`,
      json({ device_code: crypto.randomUUID() }, { authorization: `Bearer ${access_token}` }),
    );
    expect(response.status).toBe(401);
  });

  it('signs out by clearing the cookie', async () => {
    const response = await fetch(`${api.url}/auth/signout`, { method: 'POST', headers: { origin: WEB_ORIGIN } });
    expect(response.status).toBe(204);
    expect(response.headers.get('set-cookie')).toMatch(/Max-Age=0/);
  });

  it("signs out from the web's plain form, then lands on the sign-in page", async () => {
    const response = await fetch(`${api.url}/auth/signout`, {
      method: 'POST',
      headers: { origin: WEB_ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
      redirect: 'manual',
    });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/signin');
    expect(response.headers.get('set-cookie')).toMatch(/Max-Age=0/);
  });
});
