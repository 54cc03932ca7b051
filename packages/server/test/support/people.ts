/**
 * People signed in as they would be (issue 23's tests): through the GitHub sign-in of a control
 * plane against a GitHub stand-in on loopback, then the CLI's device login from that web session.
 */
import { TrellisClient } from '@trellis/client';
import { TestBrowser } from '../../../providers/test/support/browser.js';
import { type RunningControlPlane, startControlPlane } from './controlPlane.js';
import type { Clock } from '@trellis/core';
import type { TestDialect } from '@trellis/testkit';
import { GitHubStandIn } from './gitHubStandIn.js';

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
  /** Signs `login` in through GitHub (an account is made at the stand-in on first use). */
  signIn(login: string, repositories?: string[]): Promise<Person>;
  /** A client with `token` as its bearer (an API token). */
  withToken(token: string): TrellisClient;
  close(): Promise<void>;
}

export async function startPeopleServer(
  dialect: TestDialect,
  options: { env?: Record<string, string>; clock?: Clock } = {},
): Promise<PeopleServer> {
  const github = await GitHubStandIn.listen();
  const server = await startControlPlane(dialect, {
    env: {
      TRELLIS_GITHUB_CLIENT_ID: 'trellis-oauth-app',
      TRELLIS_GITHUB_CLIENT_SECRET: 'secret-of-the-trellis-oauth-app',
      TRELLIS_GITHUB_BASE_URL: github.url,
      ...options.env,
    },
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const web = server.controlPlane.config.webUrl;
  return {
    server,
    github,
    web,
    async signIn(login, repositories = []) {
      const account = github.accounts.get(login) ?? github.add(login, repositories);
      const browser = new TestBrowser();
      const started = await browser.request(`${web}/auth/signin/github`);
      if (started.status !== 303) throw new Error(`sign-in did not start (HTTP ${started.status})`);
      const callback = github.authorize(started.headers.get('location') as string, login);
      const signedIn = await browser.request(callback);
      if (signedIn.status !== 303)
        throw new Error(`sign-in failed (HTTP ${signedIn.status}): ${await signedIn.text()}`);
      const session = browser.cookie(web, 'trellis_session');
      if (!session) throw new Error('the sign-in set no session cookie');
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
        email: account.email,
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
      await github.close();
    },
  };
}
