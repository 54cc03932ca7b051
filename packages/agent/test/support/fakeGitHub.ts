import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A GitHub API request the fake saw (the token is checked, never kept). */
interface ApiRequest {
  method: string;
  path: string;
  body: Record<string, unknown> | null;
  authorized: boolean;
  /** What the fake answered. */
  answer?: unknown;
}

/**
 * A small real GitHub REST API on loopback, for a server in another process (nock cannot reach
 * it): hooks, commit statuses, issue comments (create and edit) and compare, answered in GitHub's
 * shapes. Every request is recorded; only `Bearer <token>` is accepted.
 */
export async function startFakeGitHub(
  token: string,
  repository: string,
  /** The `.tar.gz` of the repository at a ref (issue 23: the control plane fetches commits this way); null: 404. */
  archive: (ref: string) => Buffer | null = () => null,
) {
  const requests: ApiRequest[] = [];
  let nextId = 9000;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const path = url.pathname;
      const authorized = request.headers.authorization === `Bearer ${token}`;
      const body = raw === '' ? null : (JSON.parse(raw) as Record<string, unknown>);
      const record: ApiRequest = { method: request.method ?? '', path, body, authorized };
      requests.push(record);
      const answer = (status: number, json: unknown) => {
        record.answer = json;
        response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
        response.end(JSON.stringify(json));
      };
      const repo = `/repos/${repository}`;
      // codeload: the tarball by the grant in its URL; the token is never needed (nor sent) here.
      if (request.method === 'GET' && path.startsWith(`/_codeload${repo.slice('/repos'.length)}/legacy.tar.gz/`)) {
        const bytes =
          url.searchParams.get('token') === 'grant-0123'
            ? archive(decodeURIComponent(path.split('/').pop() ?? ''))
            : null;
        if (!bytes) return answer(404, { message: 'Not Found' });
        record.answer = `${bytes.length} bytes`;
        response.writeHead(200, { 'Content-Type': 'application/x-gzip', 'Content-Length': String(bytes.length) });
        response.end(bytes);
        return;
      }
      if (!authorized) return answer(401, { message: 'Bad credentials' });
      if (request.method === 'GET' && path.startsWith(`${repo}/tarball/`)) {
        const ref = path.slice(`${repo}/tarball/`.length);
        record.answer = 'redirect';
        response.writeHead(302, {
          Location: `/_codeload${repo.slice('/repos'.length)}/legacy.tar.gz/${ref}?token=grant-0123`,
          'Content-Length': '0',
        });
        response.end();
        return;
      }
      if (request.method === 'POST' && path === `${repo}/hooks`) {
        return answer(201, { id: nextId++, type: 'Repository', name: 'web', active: true, config: {} });
      }
      if (request.method === 'DELETE' && path.startsWith(`${repo}/hooks/`)) return answer(204, null);
      if (request.method === 'POST' && path.startsWith(`${repo}/statuses/`)) {
        return answer(201, { id: nextId++, state: body?.state, context: body?.context });
      }
      const created = path.startsWith(`${repo}/issues/`) ? path.match(/\/issues\/(\d+)\/comments$/) : null;
      if (request.method === 'POST' && created) {
        return answer(201, { id: nextId++, body: body?.body, html_url: `https://github.example/pr/${created[1]}` });
      }
      const edited = path.startsWith(`${repo}/issues/comments/`) ? path.match(/\/issues\/comments\/(\d+)$/) : null;
      if (request.method === 'PATCH' && edited) return answer(200, { id: Number(edited[1]), body: body?.body });
      if (request.method === 'GET' && path.startsWith(`${repo}/compare/`)) {
        // Any comparison of the test changed the infrastructure.
        return answer(200, {
          status: 'ahead',
          files: [{ filename: 'infra/main.tf', status: 'modified' }],
          commits: [],
        });
      }
      return answer(404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
