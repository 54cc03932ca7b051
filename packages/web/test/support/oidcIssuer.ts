/**
 * A real OpenID Connect issuer (`oidc-provider`) on loopback standing in for Google: any login and
 * password sign in as `<login>@example.com` with a verified email. The control plane is pointed
 * at it with `issuerEnv(issuer)`; `signInAtIssuer` is what a person does in the browser there.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import type { Page } from 'playwright-core';
import type { TestBrowser } from './browser.js';

export const CLIENT_ID = 'trellis-web-tests';
export const CLIENT_SECRET = 'trellis-web-tests-client-secret-0123456789';

export interface Issuer {
  server: Server;
  issuer: string;
  register(redirectUri: string): void;
  /** While set, the issuer sends the browser back with this `state` instead of the one it got. */
  tamperedState: string | null;
}

/** An OpenID Connect issuer on loopback; any login and password sign in as `<login>@example.com`. */
export async function startIssuer(): Promise<Issuer> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const self: Issuer = {
    server,
    issuer,
    tamperedState: null,
    register(redirectUri) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: CLIENT_ID,
            client_secret: CLIENT_SECRET,
            redirect_uris: [redirectUri],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_post',
          },
        ],
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
        findAccount: async (_ctx, sub) => ({
          accountId: sub,
          claims: async () => ({ sub, email: `${sub}@example.com`, email_verified: true, name: `Ada ${sub}` }),
        }),
        cookies: { keys: ['oidc-provider-test-cookie-key'] },
        ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 3600, IdToken: 600, Interaction: 600, Session: 3600 },
        pkce: { required: () => true },
      });
      const handle = provider.callback();
      server.on('request', (req, res) => {
        const setHeader = res.setHeader.bind(res);
        res.setHeader = (name, value) => {
          if (self.tamperedState && name.toLowerCase() === 'location' && String(value).startsWith(redirectUri)) {
            const url = new URL(String(value));
            url.searchParams.set('state', self.tamperedState);
            return setHeader(name, url.href);
          }
          return setHeader(name, value);
        };
        handle(req, res);
      });
    },
  };
  return self;
}

/** The environment that makes the control plane's Google sign-in use `issuer`. */
export function issuerEnv(issuer: Issuer): Record<string, string> {
  return {
    TRELLIS_GOOGLE_CLIENT_ID: CLIENT_ID,
    TRELLIS_GOOGLE_CLIENT_SECRET: CLIENT_SECRET,
    TRELLIS_GOOGLE_BASE_URL: issuer.issuer,
  };
}

/** Clicks the provider's button on the sign-in page, then signs in and consents at the issuer as `login`. */
export async function signInAtIssuer(page: Page, issuer: Issuer, login: string): Promise<void> {
  await page.click('.providers a');
  await page.waitForURL((url) => url.href.startsWith(issuer.issuer));
  await page.fill('input[name=login]', login);
  await page.fill('input[name=password]', 'any password');
  await page.click('button[type=submit]');
  await page.click('button[type=submit]'); // consent
}

/**
 * A person in a browser context of their own, signed in at `web` through the issuer as
 * `<login>@example.com`, landed on the vineyards page. The context closes with the browser.
 */
export async function signedInThroughIssuer(
  browser: TestBrowser,
  issuer: Issuer,
  web: string,
  login: string,
): Promise<Page> {
  const { page } = await browser.context();
  await page.goto(`${web}/vineyards`);
  await signInAtIssuer(page, issuer, login);
  await page.waitForURL(`${web}/vineyards`);
  return page;
}
