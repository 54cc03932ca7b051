/**
 * A vine's state page (issue 29), in Chromium against a real control plane on SQLite and Postgres:
 * an operator and an admin of an organization signed in through a real OpenID Connect issuer. The
 * state is written as a job's engine writes it (the `http` backend, the job's state token). The
 * operator sees the resources by module and the outputs (a sensitive one masked), the versions, and
 * downloads one; they get no rollback or unlock control, and a forged rollback post is refused by
 * core. The admin rolls back (a new current version, as the API lists it), force-unlocks, and
 * acknowledges a state written after its job was failed as lost.
 */
import { readFile } from 'node:fs/promises';
import type { TrellisClient } from '@trellis/client';
import { checkTestPostgres, FakeClock } from '@trellis/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  BROWSER_TEST_TIMEOUT_MS,
  clickAndConfirm,
  findChromium,
  screenshot,
  postWithSession,
} from './support/browser.js';
import { describeInChromiumOnEachDialect, startWebOnDialect, type WebOnDialect } from './support/dialectSuite.js';
import { signedInThroughIssuer } from './support/oidcIssuer.js';
import { ADMIN_EMAIL, type AgentClient, BOOTSTRAP_TOKEN, MAIN_TF, type WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the vine state suite');
const postgres = await checkTestPostgres();

const SECRET = 'hunter2-never-on-the-page';
const NULL_PROVIDER = 'provider["registry.opentofu.org/hashicorp/null"]';

/** A state file (format 4) as tofu writes it: resources in the root module and in `module.net`. */
function stateFile(serial: number, extraResources: number): string {
  return JSON.stringify({
    version: 4,
    terraform_version: '1.8.0',
    serial,
    lineage: 'lineage-of-the-web-vine',
    outputs: {
      endpoint: { value: `https://web-${serial}.example`, type: 'string' },
      ports: { value: [80, 443], type: ['list', 'number'] },
      db_password: { value: SECRET, type: 'string', sensitive: true },
    },
    resources: [
      {
        mode: 'managed',
        type: 'null_resource',
        name: 'web',
        provider: NULL_PROVIDER,
        instances: [{ schema_version: 0, attributes: { id: '1' } }],
      },
      ...Array.from({ length: extraResources }, (_, i) => ({
        module: 'module.net',
        mode: 'managed',
        type: 'null_resource',
        name: `subnet_${i}`,
        provider: NULL_PROVIDER,
        instances: [{ schema_version: 0, attributes: { id: String(i) } }],
      })),
      {
        module: 'module.net',
        mode: 'data',
        type: 'null_data_source',
        name: 'zones',
        provider: NULL_PROVIDER,
        instances: [{ schema_version: 0, attributes: { id: 'zones' } }],
      },
    ],
  });
}

describeInChromiumOnEachDialect(
  "a vine's state page",
  { chromiumPath, postgres, timeout: BROWSER_TEST_TIMEOUT_MS },
  (dialect) => {
    let site: WebOnDialect<true>;
    let server: WebServer;
    let web: string;
    let operator: Page;
    let admin: Page;
    let viewer: Page;
    let ownerClient: TrellisClient;
    let agent: AgentClient;
    let vineId: string;
    let jobId: string;
    let stateToken: string;
    const clock = new FakeClock(new Date());

    /** A person in their own browser, signed in through the issuer as `<login>@example.com`. */
    const signedIn = (login: string) => signedInThroughIssuer(site.browser, site.issuer, web, login);

    /** The engine's own calls to the `http` backend, with the running job's state token. */
    const backend = (method: string, body: string) =>
      fetch(`${server.url}/api/state/${vineId}`, {
        method,
        headers: {
          authorization: `Basic ${Buffer.from(`${agent.workerId}:${stateToken}`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body,
      });

    beforeAll(async () => {
      site = await startWebOnDialect(dialect, chromiumPath as string, { issuer: true, clock });
      ({ server, localhostUrl: web } = site);
      operator = await signedIn('otto');
      admin = await signedIn('adam');
      viewer = await signedIn('vera');
      // The bootstrap admin owns the organization (and signs in once, so their account exists).
      const ownerContext = await site.context();
      await ownerContext.page.goto(`${web}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);

      const { orgId, owner: ownerActor } = await server.organization('platform', ADMIN_EMAIL, [
        ['otto@example.com', 'operator'],
        ['adam@example.com', 'admin'],
        ['vera@example.com', 'viewer'],
      ]);
      const { useCases } = server;
      const vineyard = await useCases.vineyards.create(ownerActor, { name: 'prod', org_id: orgId });
      vineId = (
        await useCases.vines.create(ownerActor, {
          name: 'web',
          vineyard_id: vineyard.id,
          source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
        })
      ).id;
      ownerClient = await server.userClient(ADMIN_EMAIL);
      agent = await server.agentClient(ownerClient, 'pool', orgId);
      await agent.heartbeat('1.0.0', []);
    }, 90_000);

    afterAll(async () => {
      await site?.close();
    });

    it('a vine with no state says so', async () => {
      await operator.goto(`${web}/configurations/${vineId}`);
      await Promise.all([operator.waitForURL(/\/state$/), operator.click('[data-state-page-link]')]);
      expect(new URL(operator.url()).pathname).toBe(`/configurations/${vineId}/state`);
      expect(await operator.locator('[data-no-state]').isVisible()).toBe(true);
      expect(await operator.locator('[data-state-lock]').getAttribute('data-state-lock')).toBe('free');
      // `?done=` says only what a form did, nothing made up.
      await operator.goto(`${web}/configurations/${vineId}/state?done=__proto__`);
      expect(await operator.locator('[data-state-done]').count()).toBe(0);
    });

    it('an operator sees the resources by module, the outputs (a sensitive one masked) and the versions, and downloads one', async () => {
      const job = await ownerClient.createJob({ job_type: 'DEPLOY', configuration_id: vineId });
      const claimed = await agent.claimJob();
      expect(claimed?.job.id).toBe(job.id);
      jobId = job.id;
      stateToken = claimed?.state_token as string;
      expect((await backend('POST', stateFile(1, 0))).status).toBe(200);
      expect((await backend('POST', stateFile(2, 2))).status).toBe(200);

      await operator.goto(`${web}/configurations/${vineId}/state`);
      expect(await operator.locator('[data-current-serial]').textContent()).toBe('2');
      expect(await operator.locator('[data-current-lineage]').textContent()).toBe('lineage-of-the-web-vine');
      expect(await operator.locator('[data-current-writer] a').getAttribute('href')).toBe(`/jobs/${jobId}`);
      expect(
        await operator.locator('[data-state-module]').evaluateAll((nodes) => nodes.map((n) => n.textContent)),
      ).toEqual(['Root module', 'module.net']);
      expect(
        await operator
          .locator('[data-state-resource]')
          .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-state-resource'))),
      ).toEqual([
        'null_resource.web',
        'module.net.data.null_data_source.zones',
        'module.net.null_resource.subnet_0',
        'module.net.null_resource.subnet_1',
      ]);
      const zones = operator.locator('[data-state-resource="module.net.data.null_data_source.zones"] td');
      expect(await zones.allTextContents()).toEqual([
        'module.net.data.null_data_source.zones',
        'null_data_source',
        'registry.opentofu.org/hashicorp/null',
        'data',
        '1',
      ]);
      expect(await operator.locator('[data-state-output="endpoint"] td').allTextContents()).toEqual([
        'string',
        'https://web-2.example',
      ]);
      expect(await operator.locator('[data-state-output="ports"] td').allTextContents()).toEqual([
        'list(number)',
        '[80,443]',
      ]);
      expect(await operator.locator('[data-state-output="db_password"] td').allTextContents()).toEqual([
        'string',
        '(sensitive)',
      ]);
      expect(await operator.content()).not.toContain(SECRET);

      const versions = await ownerClient.stateHistory(vineId);
      expect(versions.versions.map((version) => version.serial)).toEqual([2, 1]);
      const rows = operator.locator('[data-state-version]');
      expect(await rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-state-version')))).toEqual(
        versions.versions.map((version) => String(version.id)),
      );
      expect(await rows.first().locator('[data-current]').count()).toBe(1);
      // An operator downloads (the API's download of a version), but neither rolls back nor unlocks.
      expect(await operator.locator('[data-rollback-form]').count()).toBe(0);
      expect(await operator.locator('[data-force-unlock-form]').count()).toBe(0);
      await screenshot(operator, 'vine-state-operator');

      const oldest = versions.versions[1]?.id as number;
      const [download] = await Promise.all([
        operator.waitForEvent('download'),
        operator.click(`[data-state-download="${oldest}"]`),
      ]);
      expect(download.suggestedFilename()).toBe('web-1.tfstate');
      const saved = JSON.parse(await readFile((await download.path()) as string, 'utf8')) as { serial: number };
      expect(saved.serial).toBe(1);
    });

    it('a viewer sees the lock, the current version and the versions, but not the state itself', async () => {
      await viewer.goto(`${web}/configurations/${vineId}/state`);
      expect(await viewer.locator('[data-current-serial]').textContent()).toBe('2');
      expect(await viewer.locator('[data-state-version]').count()).toBe(2);
      expect(await viewer.locator('[data-state-resources], [data-state-outputs]').count()).toBe(0);
      expect(await viewer.locator('[data-state-download], [data-rollback-form]').count()).toBe(0);
      expect(await viewer.locator('[data-current-state]').textContent()).toContain('shown to operators');
      expect(await viewer.content()).not.toContain('https://web-2.example');
    });

    it("an operator's forged rollback post is refused by core, with its message", async () => {
      const oldest = (await ownerClient.stateHistory(vineId)).versions.at(-1)?.id as number;
      // Past the page that asks first, as a forged post would be.
      const response = await postWithSession(
        operator,
        `${web}/configurations/${vineId}/state/versions/${oldest}/rollback`,
        'confirmed=yes',
        web,
      );
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('this needs the role admin in the organization; yours is operator');
      // Sent from another site, even an admin's session is refused before any use case runs.
      const crossSite = await postWithSession(
        admin,
        `${web}/configurations/${vineId}/state/versions/${oldest}/rollback`,
        '',
        'http://evil.example',
      );
      expect(crossSite.status).toBe(403);
      expect(await crossSite.text()).toContain('Request refused');
      expect((await ownerClient.stateHistory(vineId)).versions).toHaveLength(2);
    });

    it('an admin rolls back to an old version: a new current version with the next serial', async () => {
      const before = await ownerClient.stateHistory(vineId);
      const oldest = before.versions.at(-1)?.id as number;
      await admin.goto(`${web}/configurations/${vineId}/state`);
      expect(await admin.locator('[data-rollback-form]').count()).toBe(1);
      await clickAndConfirm(admin, `[data-state-rollback-to="${oldest}"]`);
      expect(new URL(admin.url()).search).toBe('?done=rolled-back');

      const after = await ownerClient.stateHistory(vineId);
      expect(after.versions).toHaveLength(3);
      const newest = after.versions[0];
      expect(newest?.serial).toBe(3);
      expect(await admin.locator('[data-current-version]').getAttribute('data-current-version')).toBe(
        String(newest?.id),
      );
      expect(await admin.locator('[data-current-serial]').textContent()).toBe('3');
      expect(await admin.locator('[data-current-writer]').textContent()).toBe('you');
      // The rolled-back state is version 1's: no module.net subnets, its endpoint.
      expect(await admin.locator('[data-state-resource]').count()).toBe(2);
      expect(await admin.locator('[data-state-output="endpoint"] td').last().textContent()).toBe(
        'https://web-1.example',
      );
      // The operator sees who wrote it.
      await operator.goto(`${web}/configurations/${vineId}/state`);
      expect(await operator.locator(`[data-state-version="${newest?.id}"] td`).nth(2).textContent()).toBe(
        'adam@example.com',
      );
    });

    it('an admin force-unlocks a held lock; the operator sees the holder but no control', async () => {
      const locked = await backend(
        'LOCK',
        JSON.stringify({ ID: 'dead-engine-lock', Operation: 'OperationTypeApply', Who: 'tofu@dead-host' }),
      );
      expect(locked.status).toBe(200);

      await operator.goto(`${web}/configurations/${vineId}/state`);
      expect(await operator.locator('[data-state-lock]').getAttribute('data-state-lock')).toBe('held');
      expect(await operator.locator('[data-state-lock-holder]').textContent()).toBe('tofu@dead-host');
      expect(await operator.locator('[data-force-unlock-form]').count()).toBe(0);

      await admin.goto(`${web}/configurations/${vineId}/state`);
      await screenshot(admin, 'vine-state-locked-admin');
      // A rollback is refused while the state is locked: the page says by whom.
      await Promise.all([
        admin.waitForSelector('[data-confirmation]'),
        admin.locator('[data-rollback-form] button').first().click(),
      ]);
      const [refused] = await Promise.all([
        admin.waitForEvent('response', (response) => response.request().method() === 'POST'),
        admin.click('[data-confirm-yes]'),
      ]);
      expect(refused.status()).toBe(409);
      await admin.locator('[data-form-error]').waitFor();
      expect(await admin.locator('[data-form-error]').textContent()).toBe('the state is locked by tofu@dead-host');
      expect((await ownerClient.stateHistory(vineId)).versions).toHaveLength(3);
      await clickAndConfirm(admin, '[data-state-force-unlock]');
      expect(new URL(admin.url()).search).toBe('?done=unlocked');
      expect(await admin.locator('[data-state-lock]').getAttribute('data-state-lock')).toBe('free');
      expect((await ownerClient.stateHistory(vineId)).lock).toBeNull();

      await agent.reportStatus(jobId, { status: 'SUCCESS' });
    });

    it('a state written after its job was lost: everyone sees the notice, an admin acknowledges it', async () => {
      const job = await ownerClient.createJob({ job_type: 'DEPLOY', configuration_id: vineId });
      const claimed = await agent.claimJob();
      expect(claimed?.job.id).toBe(job.id);
      stateToken = claimed?.state_token as string;
      expect((await backend('POST', stateFile(4, 0))).status).toBe(200);
      // The agent goes silent past the lost-job timeout; its engine still writes its last state.
      clock.advance({ seconds: 121 });
      expect(await server.useCases.jobs.sweepLostJobs()).toHaveLength(1);
      expect((await backend('POST', stateFile(5, 0))).status).toBe(200);
      const late = (await ownerClient.stateHistory(vineId)).state_after_lost;
      expect(late).toMatchObject({ job_id: job.id, rejected: false });

      await operator.goto(`${web}/configurations/${vineId}/state`);
      expect(await operator.locator('[data-state-after-lost]').getAttribute('data-state-after-lost')).toBe(
        String(late?.version_id),
      );
      expect(await operator.locator(`[data-state-version="${late?.version_id}"] [data-after-lost]`).count()).toBe(1);
      expect(await operator.locator('[data-acknowledge-form]').count()).toBe(0);

      await admin.goto(`${web}/configurations/${vineId}/state`);
      await clickAndConfirm(admin, '[data-state-acknowledge]');
      expect(new URL(admin.url()).search).toBe('?done=acknowledged');
      expect(await admin.locator('[data-state-after-lost]').count()).toBe(0);
      expect((await ownerClient.stateHistory(vineId)).state_after_lost).toBeNull();
    });

    it('fits a phone: nothing of the page wider than 375 px but inside its scrolling tables; labelled controls, visible focus', async () => {
      await admin.setViewportSize({ width: 375, height: 800 });
      await admin.goto(`${web}/configurations/${vineId}/state`);
      // The page's own content (the site header is the layout's): only its tables scroll sideways.
      const wide = await admin.evaluate(() =>
        [...document.querySelectorAll('.state-page *')]
          .filter((node) => !node.closest('.table-scroll') && node.getBoundingClientRect().right > 375)
          .map((node) => `${node.tagName} ${node.textContent?.slice(0, 40)}`),
      );
      expect(wide).toEqual([]);
      const tables = await admin
        .locator('.state-page .table-scroll')
        .evaluateAll((nodes) => nodes.map((node) => node.getBoundingClientRect().right));
      for (const right of tables) expect(right).toBeLessThanOrEqual(375);
      // Every control has a name a screen reader says.
      const unnamed = await admin
        .locator('.state-page a, .state-page button')
        .evaluateAll(
          (nodes) => nodes.filter((node) => !(node.getAttribute('aria-label') || node.textContent?.trim())).length,
        );
      expect(unnamed).toBe(0);
      await admin.locator('[data-state-download]').first().focus();
      const outline = await admin
        .locator('[data-state-download]')
        .first()
        .evaluate((node) => getComputedStyle(node).outlineStyle);
      expect(outline).toBe('solid');
      await screenshot(admin, 'vine-state-phone');
    });
  },
);
