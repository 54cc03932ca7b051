import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bootstrapSessionCookie, deviceLoginTokens } from '@trellis/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let server: Server | null = null;

async function stub(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<string> {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = null;
});

describe('testkit sign-in helpers', () => {
  it('take the session cookie among those the bootstrap link sets', async () => {
    const url = await stub((req, _body, res) => {
      expect(req.url).toBe('/auth/bootstrap?token=a%20token');
      res.writeHead(303, {
        location: '/',
        'set-cookie': ['trellis_csrf=x; Path=/', 'trellis_session=abc; Path=/; HttpOnly'],
      });
      res.end();
    });
    expect(await bootstrapSessionCookie(url, 'a token')).toBe('trellis_session=abc');
  });

  it('fail loudly when the bootstrap link signs nobody in', async () => {
    const url = await stub((_req, _body, res) => {
      res.writeHead(401);
      res.end();
    });
    await expect(bootstrapSessionCookie(url, 'wrong')).rejects.toThrow(/no session cookie \(HTTP 401\)/);
  });

  it('get CLI tokens through the device login: generate with the session, then exchange the code', async () => {
    const seen: string[] = [];
    const url = await stub((req, body, res) => {
      const { device_code, verification_code } = JSON.parse(body) as Record<string, string>;
      seen.push(`${req.url} ${req.headers.cookie ?? '-'} ${req.headers.origin ?? '-'}`);
      res.setHeader('content-type', 'application/json');
      if (req.url === '/api/auth/cli/generate') res.end(JSON.stringify({ verification_code: `code-${device_code}` }));
      else res.end(JSON.stringify({ access_token: verification_code, refresh_token: 'r' }));
    });
    const tokens = await deviceLoginTokens(url, 'trellis_session=abc', 'http://web.test');
    expect(tokens.access_token).toMatch(/^code-[0-9a-f-]{36}$/);
    expect(seen).toEqual(['/api/auth/cli/generate trellis_session=abc http://web.test', '/api/auth/cli/exchange - -']);
  });

  it('fail loudly when the device login is refused', async () => {
    const url = await stub((_req, _body, res) => {
      res.writeHead(403);
      res.end();
    });
    await expect(deviceLoginTokens(url, 'trellis_session=abc')).rejects.toThrow(/generate failed \(HTTP 403\)/);
  });
});
