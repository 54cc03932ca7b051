/**
 * A GitHub stand-in on loopback for the control plane under test (issue 23): the OAuth sign-in
 * (token exchange, `/user`, `/user/emails`) of the people it knows, and the REST calls of
 * git-driven runs (hooks, commit statuses, pull request comments, compare, commits), answered in
 * GitHub's shapes and recorded. Only `Bearer <a person's token>` is accepted. The control plane
 * signs in through it (`env`: `TRELLIS_GITHUB_BASE_URL`) and calls it through GitHub's real
 * adapters (`vcs`); clone URLs name an https host (sources must be https://), never cloned here.
 *
 * `signInWithGitHub` signs a person in through the web sign-in with it, then logs the CLI in
 * through the device login over HTTP, as the person would.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TrellisClient } from '@trellis/client';
import type { CommitRelation, VcsPorts } from '@trellis/core';
import { GitHubVcsApi, GitHubWebhookReader } from '@trellis/providers';
import { tarGz } from '@trellis/testkit';
import { TestBrowser } from '../../../providers/test/support/browser.js';

export interface GitHubPerson {
  login: string;
  id: number;
  email: string;
  name: string;
  /** Their OAuth access token at the stand-in (what Trellis stores, sealed). */
  token: string;
  /** What `/user/repos` lists for them (`owner/name`). */
  repositories: string[];
}

export interface GitHubRequest {
  method: string;
  path: string;
  body: Record<string, unknown> | null;
  /** The person whose token authorized it (null: none or unknown). */
  login: string | null;
}

export interface GitHubStandIn {
  origin: string;
  /** Environment of a control plane that signs in with the stand-in. */
  env: Record<string, string>;
  /** The git provider ports to register (`register.vcs`): GitHub's adapters, calling the stand-in. */
  vcs: VcsPorts;
  requests: GitHubRequest[];
  /** `<base>...<head>` → what compare answers (default: `ahead`). */
  relations: Map<string, CommitRelation>;
  /**
   * `owner/name@ref` → the `.tar.gz` the tarball endpoint answers (issue 23), wrapped in one
   * directory as GitHub's are; any other ref gets `DEFAULT_ARCHIVE`.
   */
  archives: Map<string, Buffer>;
  addPerson(login: string, id: number, repositories?: string[]): GitHubPerson;
  statusesOf(sha: string): { state: string; context: string; description: string }[];
  stop(): Promise<void>;
}

/** What the tarball endpoint answers for a ref no test set: one empty `main.tf`, in GitHub's wrapping directory. */
export const DEFAULT_ARCHIVE = tarGz([{ path: 'owner-repo-0000000/main.tf', content: 'terraform {}\n' }]);

export async function startGitHubStandIn(): Promise<GitHubStandIn> {
  const people = new Map<string, GitHubPerson>();
  const codes = new Map<string, GitHubPerson>();
  const requests: GitHubRequest[] = [];
  const relations = new Map<string, CommitRelation>();
  const archives = new Map<string, Buffer>();
  let nextId = 7000;
  let origin = '';

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const path = url.pathname.replace(/^\/api\/v3/, '');
      const raw = Buffer.concat(chunks).toString('utf8');
      const answer = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(json));
      };
      if (req.method === 'POST' && path === '/login/oauth/access_token') {
        const person = codes.get(new URLSearchParams(raw).get('code') ?? '');
        if (!person) return answer(200, { error: 'bad_verification_code' });
        return answer(200, { access_token: person.token, token_type: 'bearer', scope: 'read:user,repo,user:email' });
      }
      // codeload: the tarball itself, by the grant in its URL (GitHub sends no token here, and none is needed).
      const codeload = /^\/_codeload\/([^/]+\/[^/]+)\/legacy\.tar\.gz\/(.+)$/.exec(path);
      if (req.method === 'GET' && codeload) {
        requests.push({ method: 'GET', path, body: null, login: req.headers.authorization ? 'SENT-A-TOKEN' : null });
        if (url.searchParams.get('token') !== 'grant-0123') return answer(404, { message: 'Not Found' });
        const bytes = archives.get(`${codeload[1]}@${decodeURIComponent(codeload[2] as string)}`) ?? DEFAULT_ARCHIVE;
        res.writeHead(200, {
          'content-type': 'application/x-gzip',
          'content-disposition': `attachment; filename=${codeload[1]?.replace('/', '-')}.tar.gz`,
          'content-length': String(bytes.length),
        });
        res.end(bytes);
        return;
      }
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const person = [...people.values()].find((candidate) => candidate.token === bearer) ?? null;
      let body: Record<string, unknown> | null = null;
      try {
        body = raw === '' ? null : (JSON.parse(raw) as Record<string, unknown>);
      } catch {
        body = null;
      }
      requests.push({ method: req.method ?? '', path, body, login: person?.login ?? null });
      if (!person) return answer(401, { message: 'Bad credentials' });
      if (req.method === 'GET' && path === '/user') {
        return answer(200, { login: person.login, id: person.id, name: person.name, email: null, type: 'User' });
      }
      if (req.method === 'GET' && path === '/user/emails') {
        return answer(200, [{ email: person.email, primary: true, verified: true, visibility: 'private' }]);
      }
      if (req.method === 'GET' && path === '/user/repos') {
        return answer(
          200,
          person.repositories.map((fullName, index) => ({
            id: index + 1,
            name: fullName.split('/')[1],
            full_name: fullName,
            private: true,
            clone_url: `https://github.stand-in.test/${fullName}.git`,
            html_url: `https://github.stand-in.test/${fullName}`,
            default_branch: 'main',
            updated_at: '2024-01-01T00:00:00Z',
          })),
        );
      }
      const repo = /^\/repos\/[^/]+\/[^/]+/.exec(path)?.[0];
      const rest = repo ? path.slice(repo.length) : '';
      if (repo && req.method === 'POST' && rest === '/hooks') {
        return answer(201, { id: nextId++, type: 'Repository', name: 'web', active: true, config: {} });
      }
      if (repo && req.method === 'DELETE' && rest.startsWith('/hooks/')) return answer(204, null);
      if (repo && req.method === 'POST' && rest.startsWith('/statuses/')) {
        return answer(201, { id: nextId++, state: body?.state, context: body?.context });
      }
      if (repo && req.method === 'POST' && /^\/issues\/\d+\/comments$/.test(rest)) {
        return answer(201, { id: nextId++, body: body?.body });
      }
      const edited = /^\/issues\/comments\/(\d+)$/.exec(rest);
      if (repo && req.method === 'PATCH' && edited) return answer(200, { id: Number(edited[1]), body: body?.body });
      const compared = /^\/compare\/([0-9a-f]+)\.\.\.([0-9a-f]+)$/.exec(rest);
      if (repo && req.method === 'GET' && compared) {
        const status = relations.get(`${compared[1]}...${compared[2]}`) ?? 'ahead';
        return answer(200, { status, commits: [], files: [{ filename: 'main.tf', status: 'modified' }] });
      }
      const tarball = /^\/tarball\/(.+)$/.exec(rest);
      if (repo && req.method === 'GET' && tarball) {
        // GitHub answers 302 to codeload, with a short-lived grant of its own in the URL.
        res.writeHead(302, {
          location: `${origin}/_codeload${repo.slice('/repos'.length)}/legacy.tar.gz/${tarball[1]}?token=grant-0123`,
          'content-length': '0',
        });
        res.end();
        return;
      }
      const commit = /^\/commits\/([0-9a-f]{40})$/.exec(rest);
      if (repo && req.method === 'GET' && commit) return answer(200, { sha: commit[1] });
      return answer(404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    env: {
      TRELLIS_GITHUB_CLIENT_ID: 'github-client',
      TRELLIS_GITHUB_CLIENT_SECRET: 'github-secret',
      TRELLIS_GITHUB_BASE_URL: origin,
    },
    vcs: {
      github: {
        api: new GitHubVcsApi({ apiUrl: `${origin}/api/v3` }),
        webhooks: new GitHubWebhookReader(),
        cloneUrl: (repository) => `https://github.stand-in.test/${repository}.git`,
      },
    },
    requests,
    relations,
    archives,
    addPerson(login, id, repositories = []) {
      const person: GitHubPerson = {
        login,
        id,
        email: `${login}@example.test`,
        name: login,
        token: `gho_${randomBytes(18).toString('hex')}`,
        repositories,
      };
      people.set(login, person);
      codes.set(`code-${login}`, person);
      return person;
    },
    statusesOf(sha) {
      return requests
        .filter((r) => r.method === 'POST' && r.path.endsWith(`/statuses/${sha}`))
        .map((r) => r.body as { state: string; context: string; description: string });
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Signs `person` in on the web with GitHub (the stand-in), then logs the CLI in with the device
 * login, over HTTP: answers a client with the person's CLI token.
 */
export async function signInWithGitHub(web: string, person: GitHubPerson): Promise<TrellisClient> {
  const browser = new TestBrowser();
  const started = await browser.request(`${web}/auth/signin/github`);
  if (started.status !== 303) throw new Error(`the GitHub sign-in did not start (HTTP ${started.status})`);
  const state = new URL(started.headers.get('location') as string).searchParams.get('state') as string;
  const landed = await browser.request(
    `${web}/api/auth/callback?code=code-${person.login}&state=${encodeURIComponent(state)}`,
  );
  if (landed.status !== 303 || browser.cookie(web, 'trellis_session') === undefined) {
    throw new Error(`the GitHub sign-in of ${person.login} failed (HTTP ${landed.status})`);
  }
  const deviceCode = crypto.randomUUID();
  const generated = await browser.request(`${web}/api/auth/cli/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: new URL(web).origin },
    body: JSON.stringify({ device_code: deviceCode }),
  });
  if (generated.status !== 201) throw new Error(`the CLI login was not approved (HTTP ${generated.status})`);
  const { verification_code } = (await generated.json()) as { verification_code: string };
  const { access_token } = await new TrellisClient({ baseUrl: web }).exchangeCliLogin({
    device_code: deviceCode,
    verification_code,
  });
  return new TrellisClient({ baseUrl: web, auth: { kind: 'bearer', accessToken: () => access_token } });
}
