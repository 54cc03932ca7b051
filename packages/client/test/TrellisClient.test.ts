/**
 * The typed client against real loopback HTTP servers: it never follows a redirect (so no
 * credential reaches the redirect's target), it maps problem+json answers to `TrellisApiError`,
 * it refreshes once on a 401, and it turns an unreachable or silent server into
 * `TrellisConnectionError`.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ClientAuth,
  TrellisApiError,
  TrellisClient,
  TrellisConnectionError,
  TrellisRedirectError,
} from '../src/index.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Loopback {
  url: string;
  received: Received[];
}

type Handler = (request: Received, response: import('node:http').ServerResponse) => void;

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

/** A server on 127.0.0.1 (its own port) that records every request, headers and body. */
async function loopback(handler: Handler): Promise<Loopback> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      handler(request, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** The server an attacker would point a redirect at: answers 200 `{}` to anything and records it. */
function collector(): Promise<Loopback> {
  return loopback((_request, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"jobs":[],"access_token":"x"}');
  });
}

/** A "control plane" that redirects every request to the same path on `target`. */
function redirecting(target: string, status = 307): Promise<Loopback> {
  return loopback((request, res) => {
    res.writeHead(status, { Location: `${target}${request.url}` }).end();
  });
}

const WORKER_TOKEN = 'wt_secret-worker-token';
const ACCESS_TOKEN = 'secret-access-token';
const REFRESH_TOKEN = 'secret-refresh-token';

describe('redirects', () => {
  const cases: { name: string; auth: ClientAuth; call: (client: TrellisClient) => Promise<unknown> }[] = [
    {
      name: 'an agent call (X-Worker-Token)',
      auth: { kind: 'worker', workerId: 'w1', workerToken: WORKER_TOKEN },
      call: (client) => client.heartbeat('1.0.0'),
    },
    {
      name: 'a user call (bearer token)',
      auth: { kind: 'bearer', accessToken: () => ACCESS_TOKEN },
      call: (client) => client.listJobs(),
    },
    {
      name: 'a token refresh (refresh token in the body)',
      auth: { kind: 'none' },
      call: (client) => client.refreshTokens(REFRESH_TOKEN),
    },
    {
      name: 'a plan upload (streamed body, worker token)',
      auth: { kind: 'worker', workerId: 'w1', workerToken: WORKER_TOKEN },
      call: (client) =>
        client.uploadPlanArtifact(
          'job-1',
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('plan bytes'));
              controller.close();
            },
          }),
        ),
    },
    {
      name: 'a plan download (worker token)',
      auth: { kind: 'worker', workerId: 'w1', workerToken: WORKER_TOKEN },
      call: (client) => client.downloadPlanArtifact('job-1'),
    },
  ];

  for (const { name, auth, call } of cases) {
    it(`refuses a cross-origin 307 on ${name}: nothing reaches the other origin`, async () => {
      const elsewhere = await collector();
      const server = await redirecting(elsewhere.url);
      const client = new TrellisClient({ baseUrl: server.url, auth });

      const error = await call(client).catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(TrellisRedirectError);
      const redirect = error as TrellisRedirectError;
      expect(redirect).toBeInstanceOf(TrellisApiError);
      expect(redirect.code).toBe('redirect_refused');
      expect(redirect.status).toBe(307);
      expect(redirect.location?.startsWith(`${elsewhere.url}/api/`)).toBe(true);
      expect(redirect.message).toContain(elsewhere.url);
      expect(redirect.message).toContain('does not follow redirects');
      expect(server.received).toHaveLength(1);
      expect(elsewhere.received).toEqual([]);
    });
  }

  it('refuses 301, 302, 303 and 308 alike, and says where the redirect pointed', async () => {
    const elsewhere = await collector();
    for (const status of [301, 302, 303, 308]) {
      const server = await redirecting(elsewhere.url, status);
      const client = new TrellisClient({
        baseUrl: server.url,
        auth: { kind: 'bearer', accessToken: () => ACCESS_TOKEN },
      });
      const error = await client.createVineyard('x').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TrellisRedirectError);
      expect((error as TrellisRedirectError).status).toBe(status);
      expect((error as TrellisRedirectError).location).toBe(`${elsewhere.url}/api/cli/vineyards`);
    }
    expect(elsewhere.received).toEqual([]);
  });

  it('does not follow a redirect on the retry after a refreshed token either', async () => {
    const elsewhere = await collector();
    let calls = 0;
    const server = await loopback((request, res) => {
      calls++;
      if (calls === 1) res.writeHead(401, { 'Content-Type': 'application/problem+json' }).end('{"status":401}');
      else res.writeHead(307, { Location: `${elsewhere.url}${request.url}` }).end();
    });
    let token = 'old-token';
    const client = new TrellisClient({
      baseUrl: server.url,
      auth: {
        kind: 'bearer',
        accessToken: () => token,
        onUnauthorized: async () => {
          token = ACCESS_TOKEN;
          return true;
        },
      },
    });
    await expect(client.whoami()).rejects.toBeInstanceOf(TrellisRedirectError);
    expect(server.received.map((r) => r.headers.authorization)).toEqual(['Bearer old-token', `Bearer ${ACCESS_TOKEN}`]);
    expect(elsewhere.received).toEqual([]);
  });
});

describe('errors', () => {
  it('maps a problem+json answer to TrellisApiError with its code, detail, field errors and request id', async () => {
    const server = await loopback((_request, res) => {
      res.writeHead(422, { 'Content-Type': 'application/problem+json' }).end(
        JSON.stringify({
          type: 'about:blank',
          title: 'Unprocessable',
          status: 422,
          code: 'validation_failed',
          detail: 'the request is invalid',
          errors: [{ path: 'name', message: 'must not be empty' }],
          request_id: 'req-123',
        }),
      );
    });
    const client = new TrellisClient({ baseUrl: server.url });
    const error = (await client.createVineyard('').catch((caught: unknown) => caught)) as TrellisApiError;
    expect(error).toBeInstanceOf(TrellisApiError);
    expect(error.status).toBe(422);
    expect(error.code).toBe('validation_failed');
    expect(error.detail).toBe('the request is invalid');
    expect(error.errors).toEqual([{ path: 'name', message: 'must not be empty' }]);
    expect(error.requestId).toBe('req-123');
    expect(error.message).toBe('the request is invalid (validation_failed)');
  });

  it('uses the HTTP status as the code and the body as the detail when the answer is not JSON', async () => {
    const server = await loopback((_request, res) => {
      res.writeHead(502, { 'Content-Type': 'text/plain' }).end('bad gateway from the proxy');
    });
    const error = (await new TrellisClient({ baseUrl: server.url })
      .listVineyards()
      .catch((caught: unknown) => caught)) as TrellisApiError;
    expect(error).toBeInstanceOf(TrellisApiError);
    expect(error.status).toBe(502);
    expect(error.code).toBe('http_502');
    expect(error.detail).toBe('bad gateway from the proxy');
    expect(error.requestId).toBeNull();
  });

  it('retries once with a refreshed token after a 401, and not again', async () => {
    const server = await loopback((request, res) => {
      if (request.headers.authorization === `Bearer ${ACCESS_TOKEN}`) {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"id":"u1","email":"a@b","name":"A"}');
      } else {
        res
          .writeHead(401, { 'Content-Type': 'application/problem+json' })
          .end('{"status":401,"code":"invalid_token","detail":"expired"}');
      }
    });
    let refreshes = 0;
    let token = 'stale';
    const auth: ClientAuth = {
      kind: 'bearer',
      accessToken: () => token,
      onUnauthorized: async () => {
        refreshes++;
        token = refreshes === 1 ? ACCESS_TOKEN : 'still-stale';
        return true;
      },
    };
    expect(await new TrellisClient({ baseUrl: server.url, auth }).whoami()).toMatchObject({ id: 'u1' });
    expect(refreshes).toBe(1);

    token = 'stale';
    refreshes = 1; // the next refresh hands out a token the server refuses too
    const error = (await new TrellisClient({ baseUrl: server.url, auth })
      .whoami()
      .catch((caught: unknown) => caught)) as TrellisApiError;
    expect(error.code).toBe('invalid_token');
    expect(refreshes).toBe(2);
    expect(server.received).toHaveLength(4);
  });

  it('reports a refused connection as TrellisConnectionError naming the server', async () => {
    const server = await loopback((_request, res) => res.end());
    const url = server.url;
    await new Promise<void>((resolve) => servers.pop()?.close(() => resolve()));
    const error = await new TrellisClient({ baseUrl: url }).listVineyards().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TrellisConnectionError);
    expect((error as Error).message).toBe(`cannot reach the Trellis control plane at ${url}: ECONNREFUSED`);
  });

  it('gives up on a server that never answers after timeoutMs, as a TrellisConnectionError', async () => {
    const server = await loopback(() => {
      // never answers
    });
    const client = new TrellisClient({ baseUrl: server.url, timeoutMs: 200 });
    const error = await client.listVineyards().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TrellisConnectionError);
    expect((error as Error).message).toContain('timed out');
    expect(server.received).toHaveLength(1);
  });
});
