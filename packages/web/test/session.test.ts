/**
 * Web sessions as a browser lives them (SPEC §5.2, DESIGN §4): the cookie's flags, a session slid
 * forward by every request, its idle and absolute ends (a fake clock moves time), sign-out, and
 * the Origin check on every state-changing request that a cookie authenticates.
 */
import { FakeClock } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_TOKEN, WebServer } from './support/webServer.js';

const HOUR = 60 * 60 * 1000;
const IDLE_S = 12 * 60 * 60;

interface Cookie {
  pair: string;
  attributes: Map<string, string>;
}

function parseSetCookie(header: string): Cookie {
  const [pair, ...rest] = header.split(';').map((part) => part.trim());
  const attributes = new Map(
    rest.map((attribute) => {
      const [name, ...value] = attribute.split('=');
      return [(name as string).toLowerCase(), value.join('=')] as const;
    }),
  );
  return { pair: pair as string, attributes };
}

function sessionCookieOf(response: Response): Cookie | null {
  const header = response.headers.getSetCookie().find((value) => value.includes('trellis_session='));
  return header ? parseSetCookie(header) : null;
}

async function signIn(server: WebServer): Promise<Response> {
  return fetch(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`, { redirect: 'manual' });
}

async function page(server: WebServer, cookie: string, path = '/vineyards'): Promise<Response> {
  const response = await fetch(`${server.url}${path}`, { headers: { cookie }, redirect: 'manual' });
  await response.body?.cancel();
  return response;
}

describe('web sessions', () => {
  const clock = new FakeClock('2025-06-02T08:00:00Z');
  let server: WebServer;

  beforeAll(async () => {
    server = await new WebServer({ clock }).start();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('signs in with an HttpOnly, SameSite=Lax cookie for the whole site, not Secure on http', async () => {
    const response = await signIn(server);
    expect(response.status).toBe(303);
    const cookie = sessionCookieOf(response);
    expect(cookie?.pair).toMatch(/^trellis_session=[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(Object.fromEntries(cookie?.attributes ?? [])).toEqual({
      'max-age': String(IDLE_S),
      path: '/',
      httponly: '',
      samesite: 'Lax',
    });
  });

  it('slides the session forward on every request, pages and API alike', async () => {
    const first = sessionCookieOf(await signIn(server)) as Cookie;
    clock.advance(11 * HOUR);
    const pageResponse = await page(server, first.pair);
    expect(pageResponse.status).toBe(200);
    const second = sessionCookieOf(pageResponse) as Cookie;
    expect(second.pair).not.toBe(first.pair);
    expect(second.attributes.get('max-age')).toBe(String(IDLE_S));
    expect(second.attributes.get('httponly')).toBe('');

    clock.advance(11 * HOUR);
    // 22 hours after sign-in: the first cookie is over, the refreshed one is not.
    expect((await page(server, first.pair)).status).toBe(303);
    const apiResponse = await fetch(`${server.url}/api/cli/vineyards`, { headers: { cookie: second.pair } });
    expect(apiResponse.status).toBe(200);
    const third = sessionCookieOf(apiResponse) as Cookie;
    expect(third.attributes.get('max-age')).toBe(String(IDLE_S));
    expect((await page(server, third.pair)).status).toBe(200);
  });

  it('ends a session left idle for 12 hours: pages ask to sign in again', async () => {
    const cookie = sessionCookieOf(await signIn(server)) as Cookie;
    clock.advance(IDLE_S * 1000 + 1000);
    const response = await page(server, cookie.pair, '/workers');
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/signin?next=%2Fworkers');
    expect(sessionCookieOf(response)).toBeNull();
  });

  it('answers a part of a page htmx fetches in place with 401 once the session ended, never the sign-in page', async () => {
    const cookie = sessionCookieOf(await signIn(server)) as Cookie;
    clock.advance(IDLE_S * 1000 + 1000);
    const response = await fetch(`${server.url}/workers`, {
      headers: { cookie: cookie.pair, 'HX-Request': 'true' },
      redirect: 'manual',
    });
    expect(response.status).toBe(401);
    expect(await response.text()).toContain('Your session has ended');
  });

  it('ends a session 7 days after sign-in however active it is', async () => {
    let cookie = sessionCookieOf(await signIn(server)) as Cookie;
    let elapsed = 0;
    while (elapsed + 11 < 7 * 24) {
      clock.advance(11 * HOUR);
      elapsed += 11;
      const response = await page(server, cookie.pair);
      expect(response.status).toBe(200);
      cookie = sessionCookieOf(response) as Cookie;
    }
    // The last refresh (165 h) could not go past the absolute end (168 h).
    expect(cookie.attributes.get('max-age')).toBe(String((7 * 24 - elapsed) * 3600));
    clock.advance(11 * HOUR);
    expect((await page(server, cookie.pair)).status).toBe(303);
  });

  it('signs out only from our own pages, and clears the cookie', async () => {
    const cookie = (sessionCookieOf(await signIn(server)) as Cookie).pair;
    const signOut = (origin?: string) =>
      fetch(`${server.url}/auth/signout`, {
        method: 'POST',
        headers: { cookie, ...(origin ? { origin } : {}) },
        redirect: 'manual',
      });
    for (const refused of [await signOut(), await signOut('https://evil.example')]) {
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { code: string }).code).toBe('csrf_rejected');
      expect(sessionCookieOf(refused)).toBeNull();
    }
    const done = await signOut(new URL(server.url).origin);
    expect(done.status).toBe(204);
    const cleared = sessionCookieOf(done) as Cookie;
    expect(cleared.pair).toBe('trellis_session=');
    expect(cleared.attributes.get('max-age')).toBe('0');
  });

  it('refuses cookie-authenticated writes without our Origin, on the API and on the web pages', async () => {
    const cookie = (sessionCookieOf(await signIn(server)) as Cookie).pair;
    const origin = new URL(server.url).origin;
    const createVineyard = (headers: Record<string, string>) =>
      fetch(`${server.url}/api/cli/vineyards`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ name: `csrf-${Math.random().toString(36).slice(2, 8)}` }),
      });
    for (const headers of [{}, { origin: 'https://evil.example' }, { origin: 'null' }]) {
      const refused = await createVineyard(headers);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { code: string }).code).toBe('csrf_rejected');
    }
    expect((await createVineyard({ origin })).status).toBe(201);
    // A form post (what a cross-site page can send without CORS) is refused even with our Origin.
    const form = await fetch(`${server.url}/api/cli/vineyards`, {
      method: 'POST',
      headers: { cookie, origin, 'content-type': 'text/plain' },
      body: '{"name":"form-post"}',
    });
    expect(form.status).toBe(415);

    // The CLI login approval is a form of the web interface: same rule, and nothing is approved.
    const deviceCode = crypto.randomUUID();
    const approve = (headers: Record<string, string>) =>
      fetch(`${server.url}/cli/login`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ device_code: deviceCode }).toString(),
        redirect: 'manual',
      });
    for (const headers of [{}, { origin: 'https://evil.example' }]) {
      const refused = await approve(headers);
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('This form was not sent from a Trellis page');
    }
    await expect(
      server.useCases.auth.exchangeCliLogin({ device_code: deviceCode, verification_code: 'BCDFGH' }),
    ).rejects.toMatchObject({ code: 'authorization_pending' });
    const approved = await approve({ origin });
    expect(approved.status).toBe(200);
    expect(await approved.text()).toMatch(/id="verification-code"[^>]*>[BCDFGHJKLMNPQRSTVWXZ]{6}</);
  });
});

describe('web sessions on https', () => {
  let server: WebServer;

  beforeAll(async () => {
    server = await new WebServer({ env: { TRELLIS_WEB_URL: 'https://trellis.example.test' } }).start();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('uses a __Host- cookie, Secure, host-only, and pages send HSTS', async () => {
    const cookie = sessionCookieOf(await signIn(server)) as Cookie;
    expect(cookie.pair).toMatch(/^__Host-trellis_session=/);
    expect(cookie.attributes.get('secure')).toBe('');
    expect(cookie.attributes.get('path')).toBe('/');
    expect(cookie.attributes.has('domain')).toBe(false);
    const response = await page(server, cookie.pair);
    expect(response.status).toBe(200);
    expect(response.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
  });
});
