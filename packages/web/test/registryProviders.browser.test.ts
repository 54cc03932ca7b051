/**
 * The registry's providers, GPG keys and provider mirror on the web (issue 28), in Chromium against
 * a real control plane on SQLite and Postgres: an organization's admin (the bootstrap admin) adds
 * a GPG key (a bad one is refused on the page, keeping what was typed), sees a provider published
 * through the HTTP API and deletes one of its versions, sees an archive pushed into the mirror
 * through the API and deletes it; a viewer signed in through a real OpenID Connect issuer reads
 * the same lists with no add or delete control, and a delete form forged with their session is
 * refused with a 403 page, deleting nothing.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrellisClient } from '@trellis/client';
import type { UserActor } from '@trellis/core';
import { addAcceptedMember, checkTestPostgres } from '@trellis/testkit';
import * as openpgp from 'openpgp';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  BROWSER_TEST_TIMEOUT_MS,
  clickAndConfirm,
  clickAndFollow,
  findChromium,
  screenshot,
} from './support/browser.js';
import { describeInChromiumOnEachDialect, startWebOnDialect, type WebOnDialect } from './support/dialectSuite.js';
import { signInAtIssuer } from './support/oidcIssuer.js';
import { ADMIN_EMAIL, BOOTSTRAP_TOKEN, type WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the registry providers, GPG keys and mirror pages');
const postgres = await checkTestPostgres();

/** A tiny valid zip (a provider archive needs only to be one), made with `zip` as testkit's mirror dir is. */
function tinyZip(content: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-web-registry-zip-'));
  try {
    writeFileSync(join(dir, 'terraform-provider-null_v1.0.0_x5'), content);
    execFileSync('zip', ['-q', '-X', 'provider.zip', 'terraform-provider-null_v1.0.0_x5'], { cwd: dir });
    return readFileSync(join(dir, 'provider.zip'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const streamOf = (bytes: Buffer) => new Blob([new Uint8Array(bytes)]).stream();

/** Sends a delete form, says yes on the page that asks first, and returns the page it lands on (the same list again). */
async function confirmAndSubmit(page: Page, selector: string): Promise<URL> {
  await clickAndConfirm(page, selector);
  return new URL(page.url());
}

describeInChromiumOnEachDialect(
  "the registry's providers, GPG keys and mirror in Chromium",
  { chromiumPath, postgres, timeout: BROWSER_TEST_TIMEOUT_MS },
  (dialect) => {
    let site: WebOnDialect<true>;
    let server: WebServer;
    let web: string;
    let host: string;
    let admin: Page;
    let adminErrors: string[];
    let viewer: Page;
    let adminClient: TrellisClient;
    let key: { publicKey: string; privateKey: openpgp.PrivateKey; keyId: string };
    const zip = tinyZip('a provider binary');

    /** Publishes acme/null `version` through the HTTP API, signed with the key, with its linux_amd64 zip. */
    async function publishProvider(version: string): Promise<void> {
      const sha = createHash('sha256').update(zip).digest('hex');
      const shasums = `${sha}  terraform-provider-null_${version}_linux_amd64.zip\n${'b'.repeat(64)}  terraform-provider-null_${version}_darwin_arm64.zip\n`;
      const signature = await openpgp.sign({
        message: await openpgp.createMessage({ binary: Buffer.from(shasums) }),
        signingKeys: key.privateKey,
        detached: true,
        format: 'binary',
      });
      await adminClient.publishProviderVersion('acme', 'null', version, {
        protocols: ['5.0'],
        shasums,
        shasums_signature: Buffer.from(signature as Uint8Array).toString('base64'),
      });
      await adminClient.uploadProviderPlatform(
        'acme',
        'null',
        version,
        { os: 'linux', arch: 'amd64' },
        streamOf(zip),
        zip.length,
      );
    }

    /** Pushes registry.opentofu.org/hashicorp/null `version` for linux_amd64 into acme's mirror through the HTTP API. */
    async function pushArchive(version: string): Promise<string> {
      const archive = tinyZip(`the null provider ${version}`);
      const address = {
        hostname: 'registry.opentofu.org',
        namespace: 'hashicorp',
        type: 'null',
        version,
        platform: 'linux_amd64',
      };
      const pushed = await adminClient.pushMirrorArchive('acme', address, streamOf(archive), archive.length);
      expect(pushed.created).toBe(true);
      return pushed.archive.id;
    }

    /** A form post with the viewer's session and our Origin, as a forged page would send it. */
    const forgedPost = (path: string, form: Record<string, string> = {}) =>
      viewer.request.post(`${web}${path}`, { form, headers: { origin: web }, maxRedirects: 0 });

    beforeAll(async () => {
      site = await startWebOnDialect(dialect, chromiumPath as string, { issuer: true });
      ({ server, localhostUrl: web } = site);
      host = `localhost:${server.port}`;

      viewer = (await site.context()).page;
      await viewer.goto(`${web}/vineyards`);
      await signInAtIssuer(viewer, site.issuer, 'vera');
      await viewer.waitForURL(`${web}/vineyards`);
      const adminContext = await site.context();
      admin = adminContext.page;
      adminErrors = adminContext.errors;
      await admin.goto(`${web}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);

      const { useCases } = server;
      const adminUser = await useCases.auth.ensureUser({ email: ADMIN_EMAIL });
      const adminActor: UserActor = { userId: adminUser.id, email: adminUser.email };
      const orgId = (await useCases.orgs.create(adminActor, { name: 'acme' })).id;
      const vera = await useCases.auth.ensureUser({ email: 'vera@example.com' });
      await addAcceptedMember(useCases, adminActor, orgId, { userId: vera.id, email: vera.email }, 'viewer');
      adminClient = await server.userClient(ADMIN_EMAIL);

      const generated = await openpgp.generateKey({
        userIDs: [{ name: 'Acme Releases', email: 'releases@acme.test' }],
      });
      const privateKey = await openpgp.readPrivateKey({ armoredKey: generated.privateKey });
      key = { publicKey: generated.publicKey, privateKey, keyId: privateKey.getKeyID().toHex().toUpperCase() };
    }, 90_000);

    afterAll(async () => {
      await site?.close();
    });

    it('an admin adds a GPG key on the page; a bad one shows the problem and keeps what was typed', async () => {
      await admin.goto(`${web}/vineyards`);
      await clickAndFollow(admin, 'nav a[href$="/registry"]');
      await clickAndFollow(admin, '[data-registry-tab="gpg-keys"]');
      await admin.selectOption('#registry-namespace', 'acme');
      const shown = await clickAndFollow(admin, '.namespace-chooser button');
      expect(shown.pathname).toBe('/registry/gpg-keys');
      expect(shown.searchParams.get('namespace')).toBe('acme');
      expect(await admin.textContent('#no-gpg-keys')).toContain('No keys yet');

      await admin.fill('#gpg-key-armor', 'not a key at all');
      const refused = admin.waitForResponse((response) => response.request().method() === 'POST');
      await admin.click('form[data-add-gpg-key] button[type=submit]');
      expect((await refused).status()).toBe(400);
      await admin.waitForSelector('[data-form-error]');
      expect(await admin.textContent('#add-gpg-key [data-form-error]')).toMatch(/key/i);
      expect(await admin.inputValue('#gpg-key-armor')).toBe('not a key at all');

      await admin.fill('#gpg-key-armor', key.publicKey);
      const added = await clickAndFollow(admin, 'form[data-add-gpg-key] button[type=submit]');
      expect(added.pathname).toBe('/registry/gpg-keys');
      const row = admin.locator(`[data-gpg-key="${key.keyId}"]`);
      expect(await row.textContent()).toContain(ADMIN_EMAIL);
      expect(await admin.locator('[data-form-error]').count()).toBe(0);
      expect((await adminClient.listGpgKeys('acme')).map((k) => k.key_id)).toEqual([key.keyId]);
      await screenshot(admin, 'registry-gpg-keys');
      expect(adminErrors).toEqual([]);
    });

    it('an admin sees the providers published through the API and deletes a version', async () => {
      await publishProvider('1.0.0');
      await publishProvider('1.1.0');
      await admin.goto(`${web}/registry?namespace=acme`);
      const providers = await clickAndFollow(admin, '[data-registry-tab="providers"]');
      expect(providers.searchParams.get('namespace')).toBe('acme');
      expect(await admin.inputValue('#source-null')).toBe(`${host}/acme/null`);
      expect(await admin.locator('#provider-null button[data-copy]').getAttribute('data-copy')).toBe(
        `${host}/acme/null`,
      );
      const snippet = await admin.textContent('#provider-null [data-provider-snippet]');
      expect(snippet).toContain(`source  = "${host}/acme/null"`);
      expect(snippet).toContain('version = "1.1.0"');
      const versions = admin.locator('#provider-null [data-provider-version]');
      expect(
        await versions.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-provider-version'))),
      ).toEqual(['1.1.0', '1.0.0']);
      const newest = admin.locator('[data-provider-version="1.1.0"]');
      expect(await newest.locator('[data-platform="linux_amd64"]').textContent()).toBe('linux/amd64');
      expect(await newest.locator('[data-platform="darwin_arm64"]').textContent()).toContain('not uploaded');
      expect(await newest.textContent()).toContain(key.keyId);
      await screenshot(admin, 'registry-providers');

      const after = await confirmAndSubmit(admin, 'form[data-delete-provider-version="1.0.0"] button');
      expect(after.pathname).toBe('/registry/providers');
      expect(await admin.locator('[data-provider-version="1.0.0"]').count()).toBe(0);
      expect(await admin.locator('[data-provider-version="1.1.0"]').count()).toBe(1);
      expect((await adminClient.providerVersions('acme', 'null')).map((v) => v.version)).toEqual(['1.1.0']);
      expect(adminErrors).toEqual([]);
    });

    it('the mirror page lists an archive pushed through the API, with its use, and an admin deletes it', async () => {
      const kept = await pushArchive('3.2.3');
      const doomed = await pushArchive('3.2.4');
      await admin.goto(`${web}/registry/providers?namespace=acme`);
      const mirror = await clickAndFollow(admin, '[data-registry-tab="mirror"]');
      expect(mirror.pathname).toBe('/registry/mirror');
      expect(await admin.textContent('[data-mirror-snippet]')).toContain(
        `url = "https://${host}/api/registry/mirror/acme/"`,
      );
      const rows = admin.locator('[data-mirror-archive]');
      expect(await rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-mirror-archive')))).toEqual([
        doomed,
        kept,
      ]);
      const row = admin.locator(`[data-mirror-archive="${doomed}"]`);
      const text = (await row.textContent()) ?? '';
      for (const part of ['registry.opentofu.org/hashicorp/null', '3.2.4', 'linux_amd64', `pushed by ${ADMIN_EMAIL}`]) {
        expect(text).toContain(part);
      }
      expect(await row.locator('[data-archive-origin]').getAttribute('data-archive-origin')).toBe('pushed');
      const [archive] = (await adminClient.listMirrorArchives('acme')).filter((a) => a.id === doomed);
      const h1 = archive?.hashes.find((hash) => hash.startsWith('h1:')) as string;
      expect(await row.locator('[data-hash="h1"]').textContent()).toBe(`h1:${h1.slice(3, 15)}…`);
      expect(await row.locator('[data-hash="h1"]').getAttribute('title')).toBe(h1);
      expect(await row.locator('[data-hash="zh"]').textContent()).toMatch(/^zh:[0-9a-f]{12}…$/);
      await screenshot(admin, 'registry-mirror');

      // A page at a time, as the API lists them: the older one is on the next page.
      await admin.goto(`${web}/registry/mirror?namespace=acme&limit=1`);
      expect(await rows.count()).toBe(1);
      await clickAndFollow(admin, 'a[data-older]');
      expect(await rows.evaluateAll((all) => all.map((r) => r.getAttribute('data-mirror-archive')))).toEqual([kept]);

      await admin.goto(`${web}/registry/mirror?namespace=acme`);
      await confirmAndSubmit(admin, `form[data-delete-mirror-archive="${doomed}"] button`);
      expect(await admin.locator(`[data-mirror-archive="${doomed}"]`).count()).toBe(0);
      expect((await adminClient.listMirrorArchives('acme')).map((a) => a.id)).toEqual([kept]);
      expect(adminErrors).toEqual([]);
    });

    it('a viewer reads the lists with no add or delete control; a forged delete is refused with a 403 page', async () => {
      await viewer.goto(`${web}/registry/providers?namespace=acme`);
      expect(await viewer.locator('[data-provider-version="1.1.0"]').count()).toBe(1);
      expect(await viewer.locator('form[data-delete-provider-version]').count()).toBe(0);
      await viewer.goto(`${web}/registry/gpg-keys?namespace=acme`);
      expect(await viewer.locator(`[data-gpg-key="${key.keyId}"]`).textContent()).toContain(ADMIN_EMAIL);
      expect(await viewer.locator('form[data-delete-gpg-key], form[data-add-gpg-key], #gpg-key-armor').count()).toBe(0);
      expect(await viewer.locator('[data-read-only]').count()).toBe(1);
      await viewer.goto(`${web}/registry/mirror?namespace=acme`);
      const [archive] = await adminClient.listMirrorArchives('acme');
      expect(await viewer.locator(`[data-mirror-archive="${archive?.id}"]`).count()).toBe(1);
      expect(await viewer.locator('form[data-delete-mirror-archive]').count()).toBe(0);
      await screenshot(viewer, 'registry-mirror-viewer');

      // Forged past the page that asks first.
      const forgedVersion = await forgedPost('/registry/providers/acme/null/1.1.0/delete', { confirmed: 'yes' });
      expect(forgedVersion.status()).toBe(403);
      expect(await forgedVersion.text()).toContain('data-form-error');
      const forgedKey = await forgedPost(`/registry/gpg-keys/acme/${key.keyId}/delete`, { confirmed: 'yes' });
      expect(forgedKey.status()).toBe(403);
      expect(await forgedKey.text()).toContain('data-form-error');
      const forgedAdd = await forgedPost('/registry/gpg-keys/acme', { ascii_armor: key.publicKey });
      expect(forgedAdd.status()).toBe(403);
      expect(await forgedAdd.text()).toContain('data-form-error');
      const forgedArchive = await forgedPost(`/registry/mirror/acme/${archive?.id}/delete`, { confirmed: 'yes' });
      expect(forgedArchive.status()).toBe(403);
      expect(await forgedArchive.text()).toContain('data-form-error');
      // Nothing was deleted.
      expect((await adminClient.providerVersions('acme', 'null')).map((v) => v.version)).toEqual(['1.1.0']);
      expect((await adminClient.listGpgKeys('acme')).map((k) => k.key_id)).toEqual([key.keyId]);
      expect((await adminClient.listMirrorArchives('acme')).map((a) => a.id)).toEqual([archive?.id]);
    });

    it('the registry tabs have visible focus and fit a phone', async () => {
      await admin.setViewportSize({ width: 375, height: 740 });
      for (const path of ['/registry/providers', '/registry/gpg-keys', '/registry/mirror']) {
        await admin.goto(`${web}${path}?namespace=acme`);
        const overflow = await admin.evaluate(() =>
          [...document.querySelectorAll('main > *')]
            .filter((element) => element.getBoundingClientRect().right > window.innerWidth + 1)
            .map((element) => element.outerHTML.slice(0, 80)),
        );
        expect(overflow, path).toEqual([]);
      }
      // Reached with the keyboard, a tab shows where the focus is.
      let focused = false;
      for (let step = 0; step < 40 && !focused; step += 1) {
        await admin.keyboard.press('Tab');
        focused = await admin.evaluate(() => document.activeElement?.getAttribute('data-registry-tab') === 'providers');
      }
      expect(focused).toBe(true);
      const outline = await admin.$eval(
        '[data-registry-tab="providers"]',
        (link) => getComputedStyle(link).outlineStyle,
      );
      expect(outline).not.toBe('none');
      expect(adminErrors).toEqual([]);
    });
  },
);
