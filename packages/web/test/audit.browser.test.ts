/**
 * The audit log page in Chromium (issue 14): a person signed in through a real OpenID Connect
 * issuer on loopback finds their own sign-in in their log, reads the log of an organization they
 * administer with filters and the "Older" link; a viewer of the organization is told their role is
 * too low.
 */
import type { UserActor } from '@trellis/core';
import { addAcceptedMember } from '@trellis/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, clickAndFollow, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { type Issuer, issuerEnv, signedInThroughIssuer, startIssuer } from './support/oidcIssuer.js';
import { WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the audit log suite');

describe.skipIf(!chromiumPath)('the audit log page in Chromium', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let issuer: Issuer;
  let server: WebServer;
  let browser: TestBrowser;
  let web: string;
  let orgId: string;
  let admin: Page;
  let viewer: Page;

  /** A person in their own browser, signed in through the issuer as `<login>@example.com`. */
  const signedIn = (login: string) => signedInThroughIssuer(browser, issuer, web, login);

  beforeAll(async () => {
    issuer = await startIssuer();
    server = await new WebServer({ env: issuerEnv(issuer) }).start();
    web = `http://localhost:${server.port}`;
    issuer.register(`${web}/api/auth/callback`);
    browser = await TestBrowser.launch(chromiumPath as string);
    admin = await signedIn('adam');
    viewer = await signedIn('vera');
    const { useCases } = server;
    const ownerUser = await useCases.auth.ensureUser({ email: 'olga@example.com' });
    const owner: UserActor = { userId: ownerUser.id, email: ownerUser.email };
    orgId = (await useCases.orgs.create(owner, { name: 'platform' })).id;
    const adamUser = await useCases.auth.ensureUser({ email: 'adam@example.com' });
    await addAcceptedMember(useCases, owner, orgId, { userId: adamUser.id, email: adamUser.email }, 'admin');
    const veraUser = await useCases.auth.ensureUser({ email: 'vera@example.com' });
    await addAcceptedMember(useCases, owner, orgId, { userId: veraUser.id, email: veraUser.email }, 'viewer');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise<void>((resolve) => (issuer ? issuer.server.close(() => resolve()) : resolve()));
  });

  it("shows a person's own log, and an organization's with filters and older pages", async () => {
    const url = await clickAndFollow(admin, 'nav a[href$="/audit"]');
    expect(url.pathname).toBe('/audit');
    expect(await admin.getAttribute('nav a[href$="/audit"]', 'aria-current')).toBe('page');
    const own = admin.locator('#audit-entries tbody tr');
    expect(await own.count()).toBe(1);
    expect(await own.first().locator('[data-action]').textContent()).toBe('session.sign_in');
    expect(await own.first().locator('[data-actor]').textContent()).toBe('adam@example.com');
    expect((await own.first().locator('[data-ip]').textContent())?.trim()).toMatch(/127\.0\.0\.1|::1/);
    expect((await own.first().locator('[data-request]').textContent())?.trim()).not.toBe('-');

    // The organization's log, only the members added.
    await admin.selectOption('#audit-org', orgId);
    await admin.selectOption('#audit-action', 'member.add');
    await clickAndFollow(admin, '#audit-filter');
    expect(await admin.textContent('h2')).toContain('Log of platform');
    const added = admin.locator('#audit-entries tbody tr');
    expect(await added.count()).toBe(2);
    expect(await added.allTextContents()).toEqual([
      expect.stringContaining('olga@example.com'),
      expect.stringContaining('olga@example.com'),
    ]);
    await screenshot(admin, 'audit-org');

    // One entry a page: the "Older" link keeps the filters and shows the next one.
    await admin.goto(`${web}/audit?org_id=${orgId}&action=member.add&limit=1`);
    const first = await admin.getAttribute('#audit-entries tbody tr', 'data-audit-entry');
    const older = await clickAndFollow(admin, 'a[data-older]');
    expect(older.searchParams.get('org_id')).toBe(orgId);
    expect(older.searchParams.get('action')).toBe('member.add');
    const second = await admin.getAttribute('#audit-entries tbody tr', 'data-audit-entry');
    expect(second).not.toBe(first);
    expect(await admin.locator('a[data-older]').count()).toBe(0);
  });

  it("tells a viewer of the organization that reading its log needs an admin's role", async () => {
    const response = await viewer.goto(`${web}/audit?org_id=${orgId}`);
    expect(response?.status()).toBe(403);
    expect(await viewer.textContent('#audit-error')).toContain('admin');
    expect(await viewer.locator('#audit-entries').count()).toBe(0);
    // The organization is not offered in the viewer's choice of logs.
    expect(await viewer.locator(`#audit-org option[value="${orgId}"]`).count()).toBe(0);
  });
});
