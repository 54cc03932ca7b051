import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UnavailableError } from '@trellis/core';
import { GitHubProvider, GitLabProvider } from '@trellis/providers';
import { afterEach, describe, expect, it } from 'vitest';
import { CLIENT } from './support/fixtures.js';

/** Real loopback servers: a provider that redirects every request, and the origin it points at. */
const servers: Server[] = [];

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('provider calls never follow a redirect', () => {
  it.each([
    ['GitHub', (baseUrl: string) => new GitHubProvider({ ...CLIENT, baseUrl })],
    ['GitLab', (baseUrl: string) => new GitLabProvider({ ...CLIENT, baseUrl })],
  ])('%s: the token never reaches the origin a redirect names', async (_name, provider) => {
    const received: IncomingHttpHeaders[] = [];
    const elsewhere = await listen((req, res) => {
      received.push(req.headers);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('[]');
    });
    const redirecting = await listen((req, res) => {
      res.writeHead(307, { Location: `${elsewhere}${req.url}` }).end();
    });
    const error = await provider(redirecting)
      .listRepositories('gho_secret_provider_token', { limit: 10 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).code).toBe('provider_unavailable');
    expect((error as Error).message).toMatch(/redirect/);
    expect(received).toEqual([]);
  });
});
