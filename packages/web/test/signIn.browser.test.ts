/**
 * Signing in with an OpenID Connect provider, end to end in Chromium (DESIGN §8): a real
 * `oidc-provider` issuer on loopback stands in for Google. The browser clicks the button of the
 * sign-in page, signs in and consents at the issuer, comes back through `/api/auth/callback` and
 * lands on the page it asked for; a callback whose `state` was tampered with is refused.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the OpenID Connect sign-in suite');
const CLIENT_ID = 'trellis-web-tests';
const CLIENT_SECRET = 'trellis-web-tests-client-secret-0123456789';

interface Issuer {
  server: Server;
  issuer: string;
  register(redirectUri: string): void;
  /** While set, the issuer sends the browser back with this `state` instead of the one it got. */
  tamperedState: string | null;
}

/** An OpenID Connect issuer on loopback; any login and password sign in as `<login>@example.com`. */
async function startIssuer(): Promise<Issuer> {
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

describe.skipIf(!chromiumPath)(
  'sign-in with an OpenID Connect provider, in Chromium',
  { timeout: BROWSER_TEST_TIMEOUT_MS },
  () => {
    let issuer: Issuer;
    let server: WebServer;
    let browser: TestBrowser;
    let web: string;
    const contexts: BrowserContext[] = [];

    beforeAll(async () => {
      issuer = await startIssuer();
      server = await new WebServer({
        env: {
          TRELLIS_GOOGLE_CLIENT_ID: CLIENT_ID,
          TRELLIS_GOOGLE_CLIENT_SECRET: CLIENT_SECRET,
          TRELLIS_GOOGLE_BASE_URL: issuer.issuer,
        },
      }).start();
      // The callback URL the control plane registers follows TRELLIS_WEB_URL, here localhost at its port.
      web = `http://localhost:${server.port}`;
      issuer.register(`${web}/api/auth/callback`);
      browser = await TestBrowser.launch(chromiumPath as string);
    });
    afterAll(async () => {
      for (const context of contexts) await context.close();
      await browser?.close();
      await server?.close();
      await new Promise((resolve) => issuer?.server.close(resolve));
    });

    /** Clicks the provider's button and signs in and consents at the issuer as `login`. */
    async function signInAtIssuer(page: Page, login: string): Promise<void> {
      await page.click('.providers a');
      await page.waitForURL((url) => url.href.startsWith(issuer.issuer));
      await page.fill('input[name=login]', login);
      await page.fill('input[name=password]', 'any password');
      await page.click('button[type=submit]');
      await page.click('button[type=submit]'); // consent
    }

    it('signs in with the provider and lands on the page asked for', async () => {
      const { context, page, errors } = await browser.context();
      contexts.push(context);
      await page.goto(`${web}/workers`);
      expect(new URL(page.url()).pathname).toBe('/signin');
      expect(await page.locator('.providers a').textContent()).toBe('Sign in with 127.0.0.1');
      await signInAtIssuer(page, 'ada');
      await page.waitForURL(`${web}/workers`);
      expect(await page.locator('.account .email').textContent()).toBe('ada@example.com');
      const session = (await context.cookies()).find((cookie) => cookie.name === 'trellis_session');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
      await screenshot(page, 'signin-oidc-done');
      expect(errors).toEqual([]);
    });

    it('refuses a callback whose state was tampered with, and says so', async () => {
      const { context, page } = await browser.context();
      contexts.push(context);
      // The browser comes back from the issuer with a state that is not the one it left with.
      issuer.tamperedState = `google.${'A'.repeat(43)}`;
      await page.goto(`${web}/signin?next=%2Fvineyards`);
      await signInAtIssuer(page, 'eve');
      await page.waitForURL((url) => url.pathname === '/signin' && url.searchParams.has('error'));
      issuer.tamperedState = null;
      const url = new URL(page.url());
      expect(url.searchParams.get('error')).toBe('invalid_state');
      expect(url.searchParams.get('next')).toBe('/vineyards');
      expect(await page.locator('[data-signin-error]').textContent()).toContain('could not be verified');
      await screenshot(page, 'signin-oidc-tampered');
      expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain('trellis_session');
      await page.goto(`${web}/vineyards`);
      expect(new URL(page.url()).pathname).toBe('/signin');
    });
  },
);
