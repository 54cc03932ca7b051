/**
 * Signing in with an OpenID Connect provider, end to end in Chromium (DESIGN §8): a real
 * `oidc-provider` issuer on loopback stands in for Google. The browser clicks the button of the
 * sign-in page, signs in and consents at the issuer, comes back through `/api/auth/callback` and
 * lands on the page it asked for; a callback whose `state` was tampered with is refused.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { type Issuer, issuerEnv, signInAtIssuer as signInAt, startIssuer } from './support/oidcIssuer.js';
import { WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the OpenID Connect sign-in suite');
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
      server = await new WebServer({ env: issuerEnv(issuer) }).start();
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
      await signInAt(page, issuer, login);
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
