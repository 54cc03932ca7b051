/**
 * The notifications page in Chromium against a real control plane and a real receiver on
 * loopback: reached from the navigation, a webhook made with the form shows its secret once, a
 * test delivery arrives signed with it, its delivery is listed, and deleting it empties the list.
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, clickAndFollow, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { BOOTSTRAP_TOKEN, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the notifications page suite');

describe.skipIf(!chromiumPath)('the notifications page in Chromium', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let server: WebServer;
  let browser: TestBrowser;
  const contexts: BrowserContext[] = [];
  const received: { body: string; signature: string; delivery: string }[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        body: Buffer.concat(chunks).toString('utf8'),
        signature: String(req.headers['x-trellis-signature']),
        delivery: String(req.headers['x-trellis-delivery']),
      });
      res.writeHead(204).end();
    });
  });
  let receiverUrl = '';

  beforeAll(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    server = await new WebServer({ env: { TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS: 'true' } }).start();
    browser = await TestBrowser.launch(chromiumPath as string);
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.close();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('creates a webhook with its secret shown once, tests it, lists its delivery and deletes it', async () => {
    const { context, page, errors } = await browser.context();
    contexts.push(context);
    await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
    await page.goto(`${server.url}/vineyards`);
    const url = await clickAndFollow(page, 'nav a[href$="/notifications"]');
    expect(url.pathname).toBe('/notifications');
    await page.waitForSelector('#no-notifications');

    await page.fill('#notification-name', 'ops');
    await page.fill('#notification-url', receiverUrl);
    await page.check('input[name="events"][value="job.succeeded"]');
    await page.click('#create-notification');
    await page.waitForSelector('#new-secret');
    const secret = (await page.textContent('#new-secret'))?.trim() ?? '';
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(await page.locator('table.notifications tbody tr').first().textContent()).toContain(
      'job.succeeded, job.failed',
    );
    await screenshot(page, 'notifications-created');

    await page.goto(`${server.url}/notifications`);
    expect(await page.content()).not.toContain(secret);

    await page.click('button[data-test]');
    await page.waitForSelector('#test-status');
    expect(await page.textContent('#test-status')).toBe('delivered');
    expect(received).toHaveLength(1);
    const [first] = received;
    expect(first?.signature).toBe(
      `sha256=${createHmac('sha256', secret)
        .update(first?.body ?? '')
        .digest('hex')}`,
    );
    expect(JSON.parse(first?.body ?? '{}').event).toBe('notification.test');

    await page.click('table.notifications tbody tr td a');
    await page.waitForSelector('table.deliveries');
    expect(await page.getAttribute(`#delivery-${first?.delivery}`, 'data-status')).toBe('delivered');
    await screenshot(page, 'notification-deliveries');

    await page.goto(`${server.url}/notifications`);
    await page.click('button[data-delete]');
    await page.waitForSelector('#no-notifications');
    expect(errors).toEqual([]);
  });

  it('says why a URL was refused, on the page', async () => {
    const plain = await new WebServer().start();
    try {
      const { context, page } = await browser.context();
      contexts.push(context);
      await page.goto(`${plain.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
      await page.goto(`${plain.url}/notifications`);
      await page.fill('#notification-name', 'local');
      await page.fill('#notification-url', 'https://127.0.0.1/hook');
      await page.click('#create-notification');
      await page.waitForSelector('#notification-error');
      expect(await page.textContent('#notification-error')).toContain('private');
    } finally {
      await plain.close();
    }
  });
});
