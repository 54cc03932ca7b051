/**
 * People signed in as they would be (issue 23's tests): through the GitHub sign-in of a control
 * plane against the GitHub stand-in on loopback (`gitHubStandIn.ts`), then the CLI's device login
 * from that web session, keeping what a test needs of each: the CLI client, its access token and
 * the web session cookie.
 */
import { TrellisClient } from '@trellis/client';
import type { Clock } from '@trellis/core';
import type { TestDialect } from '@trellis/testkit';
import { TestBrowser } from '../../../providers/test/support/browser.js';
import { type RunningControlPlane, startControlPlane } from './controlPlane.js';
import { type GitHubStandIn, startGitHubStandIn } from './gitHubStandIn.js';

export interface Person {
  login: string;
  email: string;
  /** The CLI, signed in (bearer access token). */
  client: TrellisClient;
  accessToken: string;
  /** The web session cookie pair (`trellis_session=…`). */
  cookie: string;
}

export interface PeopleServer {
  server: RunningControlPlane;
  github: GitHubStandIn;
  web: string;
  /** Signs `login` in through GitHub (a person is made at the stand-in on first use). */
  signIn(login: string, repositories?: string[]): Promise<Person>;
  /** A client with `token` as its bearer (an API token). */
  withToken(token: string): TrellisClient;
  close(): Promise<void>;
}

export async function startPeopleServer(
  dialect: TestDialect,
  options: { env?: Record<string, string>; clock?: Clock } = {},
): Promise<PeopleServer> {
  const github = await startGitHubStandIn();
  const server = await startControlPlane(dialect, {
    env: { ...github.env, ...options.env },
    // GitHub's adapters calling the stand-in, with https clone URLs (sources must be https://).
    register: { vcs: github.vcs },
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const web = server.controlPlane.config.webUrl;
  let nextId = 4100;
  const people = new Map<string, ReturnType<GitHubStandIn['addPerson']>>();
  return {
    server,
    github,
    web,
    async signIn(login, repositories = []) {
      const person = people.get(login) ?? github.addPerson(login, nextId++, repositories);
      people.set(login, person);
      const browser = new TestBrowser();
      const started = await browser.request(`${web}/auth/signin/github`);
      if (started.status !== 303) throw new Error(`sign-in did not start (HTTP ${started.status})`);
      // GitHub sends the browser back with a code for the person who approved (the stand-in's `code-<login>`).
      const state = new URL(started.headers.get('location') as string).searchParams.get('state') as string;
      const signedIn = await browser.request(
        `${web}/api/auth/callback?code=code-${login}&state=${encodeURIComponent(state)}`,
      );
      const session = browser.cookie(web, 'trellis_session');
      if (signedIn.status !== 303 || !session) throw new Error(`sign-in of ${login} failed (HTTP ${signedIn.status})`);
      const deviceCode = crypto.randomUUID();
      const generated = await browser.request(`${web}/api/auth/cli/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: new URL(web).origin },
        body: JSON.stringify({ device_code: deviceCode }),
      });
      if (generated.status !== 201) throw new Error(`device login failed (HTTP ${generated.status})`);
      const { verification_code } = (await generated.json()) as { verification_code: string };
      const { access_token } = await new TrellisClient({ baseUrl: web }).exchangeCliLogin({
        device_code: deviceCode,
        verification_code,
      });
      return {
        login,
        email: person.email,
        client: new TrellisClient({ baseUrl: web, auth: { kind: 'bearer', accessToken: () => access_token } }),
        accessToken: access_token,
        cookie: `trellis_session=${session}`,
      };
    },
    withToken(token) {
      return new TrellisClient({ baseUrl: web, auth: { kind: 'bearer', accessToken: () => token } });
    },
    async close() {
      await server.close();
      await github.stop();
    },
  };
}
