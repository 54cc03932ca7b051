/**
 * The real `trellis` binary never follows a redirect: not when `login` checks the server, not
 * when a command sends the saved access token, not when it refreshes the login. A server on
 * another loopback port stands for the redirect's target and records whatever reaches it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runTrellis, TempHome } from './harness.js';

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const servers: Server[] = [];
const homes: TempHome[] = [];

async function listen(handler: (request: Received, res: import('node:http').ServerResponse) => void) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const request = { url: req.url ?? '', headers: req.headers, body };
      received.push(request);
      handler(request, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

let elsewhere: Awaited<ReturnType<typeof listen>>;
let redirecting: Awaited<ReturnType<typeof listen>>;

beforeAll(async () => {
  elsewhere = await listen((_request, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"ok"}');
  });
  redirecting = await listen((request, res) => {
    res.writeHead(307, { Location: `${elsewhere.url}${request.url}` }).end();
  });
});
afterEach(() => {
  elsewhere.received.length = 0;
  redirecting.received.length = 0;
});
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  for (const home of homes) home.remove();
});

/** A home with a saved login for the redirecting server; `expired` makes the CLI refresh first. */
function homeWithLogin(expired: boolean): TempHome {
  const home = new TempHome();
  homes.push(home);
  mkdirSync(dirname(home.authPath), { recursive: true, mode: 0o700 });
  writeFileSync(
    home.authPath,
    JSON.stringify({
      server: redirecting.url,
      user_email: 'alice@example.com',
      access_token: 'secret-access-token',
      access_token_expires_at: new Date(Date.now() + (expired ? -60_000 : 3_600_000)).toISOString(),
      refresh_token: 'secret-refresh-token',
    }),
    { mode: 0o600 },
  );
  return home;
}

describe('redirects', () => {
  it('`trellis login` stops at a server that redirects, naming where it pointed', async () => {
    const home = new TempHome();
    homes.push(home);
    const result = await runTrellis(['login', '--server', redirecting.url, '--no-browser'], { env: home.env() });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`redirect (HTTP 307) to ${elsewhere.url}/healthz`);
    expect(result.stderr).toContain('[redirect_refused]');
    expect(result.stderr).not.toContain('Verification code');
    expect(elsewhere.received).toEqual([]);
  });

  it('a command sends its access token to the configured server only', async () => {
    const result = await runTrellis(['whoami'], { env: homeWithLogin(false).env() });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('[redirect_refused]');
    expect(redirecting.received.map((r) => r.headers.authorization)).toEqual(['Bearer secret-access-token']);
    expect(elsewhere.received).toEqual([]);
  });

  it('a refresh sends the refresh token to the configured server only', async () => {
    const result = await runTrellis(['whoami'], { env: homeWithLogin(true).env() });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('[redirect_refused]');
    expect(redirecting.received.map((r) => r.url)).toContain('/api/auth/cli/refresh');
    expect(redirecting.received.some((r) => r.body.includes('secret-refresh-token'))).toBe(true);
    expect(elsewhere.received).toEqual([]);
  });
});
