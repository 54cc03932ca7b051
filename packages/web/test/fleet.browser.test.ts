/**
 * The fleet page (issue 29) in Chromium against a real control plane on SQLite and Postgres: every
 * configuration the signed-in person may read, across their own vineyards and an organization's;
 * the filter form (a plain GET), the counts at the top as links that apply their filter, the
 * table's standings (status, drift, policy of the latest plan, tags) and the "Older" page link.
 * The standings come from real jobs an agent reports.
 */
import type { TrellisClient } from '@trellis/client';
import type { UserActor } from '@trellis/core';
import { checkTestPostgres } from '@trellis/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, clickAndFollow, findChromium, screenshot } from './support/browser.js';
import { describeInChromiumOnEachDialect, startWebOnDialect, type WebOnDialect } from './support/dialectSuite.js';
import { runJob } from './support/seed.js';
import { ADMIN_EMAIL, type AgentClient, MAIN_TF, type WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the fleet page suite');
const postgres = await checkTestPostgres();

const failedPolicy = {
  policy_id: '00000000-0000-4000-8000-0000000000f1',
  version: 1,
  name: 'no-deletes',
  enforcement: 'mandatory',
  passed: false,
  messages: ['aws_s3_bucket.logs would be deleted'],
};

describeInChromiumOnEachDialect(
  'the fleet page',
  { chromiumPath, postgres, timeout: BROWSER_TEST_TIMEOUT_MS },
  (dialect) => {
    let site: WebOnDialect;
    let server: WebServer;
    let user: TrellisClient;
    let agent: AgentClient;

    const signedInPage = () => site.signedInPage();

    const rowNames = (page: Page) =>
      page
        .locator('#fleet-table tbody tr')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-fleet-vine')));

    beforeAll(async () => {
      site = await startWebOnDialect(dialect, chromiumPath as string);
      ({ server } = site);
      user = await server.userClient();
      agent = await server.agentClient(user, 'fleet-agent');
      const org = await user.createOrg('fleet-team');
      const own = await user.createVineyard('apps');
      const team = await user.createVineyard('team-yard', { orgId: org.id });
      const source = { type: 'inline' as const, files: { 'main.tf': MAIN_TF } };
      const web = await user.createConfiguration({ name: 'web', vineyard_id: own.id, source });
      const api = await user.createConfiguration({ name: 'api', vineyard_id: team.id, source });
      const db = await user.createConfiguration({ name: 'db', vineyard_id: own.id, source });
      // Tags as the Terraform Cloud protocol sets them (issue 26).
      const admin = await server.useCases.auth.ensureUser({ email: ADMIN_EMAIL });
      const actor: UserActor = { userId: admin.id, email: admin.email };
      await server.useCases.tfe.workspaces.addTags(actor, { id: `ws-${web.id}` }, ['prod']);
      await server.useCases.tfe.workspaces.addTags(actor, { id: `ws-${api.id}` }, ['prod', 'edge']);
      // web: a plan that failed a policy. db: deployed, then a drift check that finds drift.
      await runJob(
        user,
        agent,
        { job_type: 'PLAN', configuration_id: web.id },
        {
          status: 'SUCCESS',
          artifact: true,
          execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 }, policy_results: [failedPolicy] },
        },
      );
      await runJob(user, agent, { job_type: 'DEPLOY', configuration_id: db.id }, { status: 'SUCCESS' });
      const check = await user.checkDrift(db.id);
      expect((await agent.claimJob())?.job.id).toBe(check.id);
      await agent.reportStatus(check.id, {
        status: 'SUCCESS',
        execution_metadata: { plan_summary: { add: 0, change: 2, destroy: 0 } },
      });
    });

    afterAll(async () => {
      await site?.close();
    });

    it('lists every configuration with its standings and counts, from the navigation', async () => {
      const page = await signedInPage();
      await page.goto(`${server.url}/vineyards`);
      await clickAndFollow(page, 'header nav a[href$="/fleet"]');
      expect(await page.locator('header nav a[aria-current="page"]').textContent()).toBe('Fleet');
      expect(await rowNames(page)).toEqual(['db', 'api', 'web']);
      expect(await page.locator('#fleet-total').textContent()).toBe('3');
      const web = page.locator('tr[data-fleet-vine="web"]');
      expect(await web.locator('td').evaluateAll((cells) => cells.map((cell) => cell.textContent?.trim()))).toEqual([
        'web',
        'apps',
        'Personal',
        'PLANNED',
        'never checked',
        'failed',
        'prod',
        expect.any(String),
      ]);
      const api = page.locator('tr[data-fleet-vine="api"] td');
      expect(await api.nth(2).textContent()).toBe('fleet-team');
      expect(await api.nth(6).textContent()).toMatch(/edge\s+prod/);
      expect(await page.locator('tr[data-fleet-vine="db"] [data-drift]').textContent()).toBe('drifted');
      expect(await page.locator('[data-count="policy:failed"] .fleet-count').textContent()).toBe('1');
      expect(await page.locator('[data-count="drift:never_checked"] .fleet-count').textContent()).toBe('2');
      await screenshot(page, `fleet-${dialect}`);
    });

    it('filters with the form and with the counts, which apply their filter', async () => {
      const page = await signedInPage();
      await page.goto(`${server.url}/fleet`);
      await page.selectOption('#fleet-policy', 'failed');
      const filtered = await clickAndFollow(page, '#fleet-filter');
      expect(filtered.searchParams.get('policy')).toBe('failed');
      expect(await rowNames(page)).toEqual(['web']);
      expect(await page.locator('#fleet-total').textContent()).toBe('1');
      // The form keeps what was chosen.
      expect(await page.locator('#fleet-policy').inputValue()).toBe('failed');

      await clickAndFollow(page, '#fleet-clear');
      await clickAndFollow(page, '[data-count="status:NEW"]');
      expect(new URL(page.url()).searchParams.get('status')).toBe('NEW');
      expect(await rowNames(page)).toEqual(['api']);
      expect(await page.locator('[data-count="status:NEW"]').getAttribute('aria-current')).toBe('true');

      await page.fill('#fleet-tag', 'prod');
      await page.selectOption('#fleet-status', '');
      await clickAndFollow(page, '#fleet-filter');
      expect(await rowNames(page)).toEqual(['api', 'web']);
      await page.selectOption('#fleet-drift', 'drifted');
      await clickAndFollow(page, '#fleet-filter');
      expect(await page.locator('#fleet-empty').textContent()).toBe('No configuration matches.');
      expect(await page.locator('#fleet-total').textContent()).toBe('0');

      const refused = await page.goto(`${server.url}/fleet?drift=sideways`);
      expect(refused?.status()).toBe(400);
      expect(await page.locator('#fleet-error').textContent()).toContain('drift');
    });

    it('pages with "Older", keeping the filter', async () => {
      const page = await signedInPage();
      await page.goto(`${server.url}/fleet?tag=prod&limit=1`);
      expect(await rowNames(page)).toEqual(['api']);
      const older = await clickAndFollow(page, 'a[data-older]');
      expect(older.searchParams.get('tag')).toBe('prod');
      expect(await rowNames(page)).toEqual(['web']);
      expect(await page.locator('a[data-older]').count()).toBe(0);
    });
  },
);
