/**
 * The API tokens page in Chromium against a real control plane: reached from the navigation,
 * a token made with the form is shown once (and works as a bearer token), the list never shows
 * it again, revoking it stops it at once; forms from another origin are refused.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, clickAndFollow, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { ADMIN_EMAIL, BOOTSTRAP_TOKEN, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the API tokens page suite');

describe.skipIf(!chromiumPath)('the API tokens page in Chromium', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let server: WebServer;
  let browser: TestBrowser;
  const contexts: BrowserContext[] = [];

  async function signedInPage(): Promise<{ page: Page; errors: string[] }> {
    const { context, page, errors } = await browser.context();
    contexts.push(context);
    await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
    return { page, errors };
  }
  const whoamiWith = (token: string) =>
    fetch(`${server.url}/api/cli/whoami`, { headers: { Authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    server = await new WebServer().start();
    browser = await TestBrowser.launch(chromiumPath as string);
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.close();
  });

  it('makes a token shown once, lists it without the secret, and revokes it', async () => {
    const { page, errors } = await signedInPage();
    await page.goto(`${server.url}/vineyards`);
    const tokensUrl = await clickAndFollow(page, 'nav a[href$="/tokens"]');
    expect(tokensUrl.pathname).toBe('/tokens');
    expect(await page.getAttribute('nav a[href$="/tokens"]', 'aria-current')).toBe('page');
    await page.waitForSelector('#no-tokens');

    await page.fill('#token-name', 'pipeline');
    await page.fill('#token-days', '30');
    // The answer to the POST is the same address: wait for what only it has.
    await page.click('#create-token');
    await page.waitForSelector('#new-token');
    const token = (await page.textContent('#new-token'))?.trim() ?? '';
    expect(token).toMatch(/^trt_[A-Za-z0-9_-]{43}$/);
    expect(page.url()).not.toContain(token);
    await screenshot(page, 'tokens-created');
    const row = page.locator('table.tokens tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.first().textContent()).toContain('pipeline');

    const whoami = await whoamiWith(token);
    expect(whoami.status).toBe(200);
    expect(((await whoami.json()) as { email: string }).email).toBe(ADMIN_EMAIL);

    // Shown once: the list page no longer has it, though it has the token's row.
    await page.goto(`${server.url}/tokens`);
    expect(await page.content()).not.toContain(token);
    expect(await page.locator('#new-token').count()).toBe(0);
    expect(await page.locator('table.tokens tbody tr').first().textContent()).toContain('pipeline');
    await screenshot(page, 'tokens-list');

    await page.click('button[data-revoke]');
    await page.waitForSelector('#no-tokens');
    expect(new URL(page.url()).pathname).toBe('/tokens');
    const refused = await whoamiWith(token);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe('invalid_token');
    expect(errors).toEqual([]);
  });

  it('says why a token was refused, on the page', async () => {
    const { page } = await signedInPage();
    await page.goto(`${server.url}/tokens`);
    // Past the browser's own checks, as a hand-made request would be.
    await page.evaluate(() => {
      const input = document.querySelector('#token-days') as HTMLInputElement;
      input.removeAttribute('max');
      input.value = '400';
    });
    await page.fill('#token-name', 'too-long');
    await page.click('#create-token');
    await page.waitForSelector('#token-error');
    expect(await page.textContent('#token-error')).toContain('expires_in_days');
    expect(await page.locator('#new-token').count()).toBe(0);
  });

  it('refuses token forms posted from another origin', async () => {
    const cookie = await server.sessionCookie();
    const before = await server.useCases.apiTokens.list(
      { userId: (await (await server.userClient()).whoami()).id, email: ADMIN_EMAIL },
      {},
    );
    const forged = await fetch(`${server.url}/tokens`, {
      method: 'POST',
      headers: {
        Cookie: cookie,
        Origin: 'https://evil.example',
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: 'name=stolen',
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
    expect(await forged.text()).not.toContain('trt_');
    const after = await server.useCases.apiTokens.list(
      { userId: (await (await server.userClient()).whoami()).id, email: ADMIN_EMAIL },
      {},
    );
    expect(after.items.length).toBe(before.items.length);
  });
});
