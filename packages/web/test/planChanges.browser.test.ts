/**
 * Reviewing a plan's changes on its job page (issue 29), in Chromium against a real control plane
 * on SQLite and Postgres: the person plans from the vine page, the agent stores the plan and its
 * change document, and the job page shows the resources as a tree by module with their marks,
 * each resource's attribute diff folded in a `<details>` (masked values `(sensitive)`, unknown
 * ones `(known after apply)`), beside the review. axe-core finds no serious violation, and on a
 * 375 px phone nothing scrolls sideways. A plan of an older agent keeps the list of addresses.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { PlanChanges } from '@trellis/core';
import { checkTestPostgres } from '@trellis/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, findChromium, screenshot, type TestBrowser } from './support/browser.js';
import { describeInChromiumOnEachDialect, startWebOnDialect, type WebOnDialect } from './support/dialectSuite.js';
import { type AgentClient, BOOTSTRAP_TOKEN, MAIN_TF, type WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the plan changes suite');
const postgres = await checkTestPostgres();
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const LONG_NAME = `a-very-long-bucket-name-${'x'.repeat(120)}`;

/** What an agent derives from a plan: a replacement and a create in the root, an update in `module.db`. */
const DOCUMENT: PlanChanges = {
  format_version: 1,
  resource_changes: [
    {
      address: 'aws_instance.web',
      module_address: null,
      type: 'aws_instance',
      name: 'web',
      actions: ['delete', 'create'],
      action_reason: 'replace_because_cannot_update',
      attributes: [
        { path: 'ami', before: { value: 'ami-1' }, after: { value: 'ami-2' }, forces_replacement: true },
        { path: 'id', before: { value: 'i-1' }, after: { unknown: true } },
      ],
      attributes_omitted: 0,
      unchanged_attributes: 3,
    },
    {
      address: 'aws_s3_bucket.logs',
      module_address: null,
      type: 'aws_s3_bucket',
      name: 'logs',
      actions: ['create'],
      attributes: [
        { path: 'bucket', after: { value: LONG_NAME } },
        { path: 'tags["app.kubernetes.io/name"]', after: { value: 'logs' } },
        { path: 'arn', after: { unknown: true } },
      ],
      attributes_omitted: 0,
      unchanged_attributes: 0,
    },
    {
      address: 'module.db.aws_db_instance.main',
      module_address: 'module.db',
      type: 'aws_db_instance',
      name: 'main',
      actions: ['update'],
      attributes: [
        { path: 'password', before: { sensitive: true }, after: { sensitive: true } },
        { path: 'port', before: { value: 5432 }, after: { value: 5433 } },
      ],
      attributes_omitted: 0,
      unchanged_attributes: 4,
    },
    {
      address: 'module.db.aws_iam_user.old',
      module_address: 'module.db',
      type: 'aws_iam_user',
      name: 'old',
      actions: ['delete'],
      attributes: [{ path: 'name', before: { value: 'old' } }],
      attributes_omitted: 0,
      unchanged_attributes: 0,
    },
  ],
  resource_changes_omitted: 0,
  output_changes: [
    {
      name: 'db_password',
      actions: ['create'],
      attributes: [{ path: 'db_password', after: { sensitive: true } }],
      attributes_omitted: 0,
    },
  ],
  output_changes_omitted: 0,
  truncated: false,
};

describeInChromiumOnEachDialect(
  "a plan's changes on its job page",
  { chromiumPath, postgres, timeout: BROWSER_TEST_TIMEOUT_MS },
  (dialect) => {
    let site: WebOnDialect;
    let server: WebServer;
    let browser: TestBrowser;
    let page: Page;
    let errors: string[];
    let web: string;
    let agent: AgentClient;
    let vineId: string;

    beforeAll(async () => {
      site = await startWebOnDialect(dialect, chromiumPath as string);
      ({ server, browser, localhostUrl: web } = site);
      ({ page, errors } = await browser.context());
      await page.goto(`${web}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
      const owner = await server.userClient();
      const vineyard = await owner.createVineyard('prod');
      vineId = (
        await owner.createConfiguration({
          name: 'web',
          vineyard_id: vineyard.id,
          source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
        })
      ).id;
      agent = await server.agentClient(owner);
    }, 90_000);

    afterAll(async () => {
      await site?.close();
    });

    /** The agent's part of a plan: claims it, stores the plan file and (unless null) the document. */
    async function runPlan(jobId: string, document: PlanChanges | null): Promise<void> {
      const claimed = await agent.claimJob();
      expect(claimed?.job.id).toBe(jobId);
      const bytes = new TextEncoder().encode(`plan of ${jobId}`);
      await agent.uploadPlanArtifact(jobId, bytes, bytes.length);
      if (document) await agent.uploadPlanChanges(jobId, document);
      await agent.reportStatus(jobId, {
        status: 'SUCCESS',
        execution_metadata: {
          plan_summary: { add: 2, change: 1, destroy: 2 },
          resource_changes: DOCUMENT.resource_changes.map(({ address, actions }) => ({ address, actions })),
        },
      });
    }

    it('plans from the vine page and reviews the change tree by module, each diff folded', async () => {
      await page.goto(`${web}/configurations/${vineId}`);
      await Promise.all([page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/), page.click('button[data-create-job="PLAN"]')]);
      const jobId = new URL(page.url()).pathname.split('/').pop() as string;
      // The page was loaded while the plan was queued: once it ends, the page shows its changes and review.
      expect(await page.locator('#job-status').getAttribute('data-status')).toBe('QUEUED');
      await runPlan(jobId, DOCUMENT);
      await page.waitForSelector('#job-status:text("SUCCESS")');

      const section = page.locator('[data-plan-changes]');
      await section.waitFor();
      // The list of addresses gives way to the tree.
      expect(await page.locator('#resource-changes').count()).toBe(0);
      expect((await section.locator('[data-change-counts]').textContent())?.replace(/\s+/g, ' ').trim()).toBe(
        '+ 1 to create · ~ 1 to update · -/+ 1 to replace · - 1 to destroy',
      );
      expect(
        await section
          .locator('[data-module]')
          .evaluateAll((items) => items.map((item) => item.getAttribute('data-module'))),
      ).toEqual(['', 'module.db']);
      // module.db sits inside the root module's item: a tree, not a flat list.
      expect(await section.locator('[data-module=""] [data-module="module.db"]').count()).toBe(1);
      const resources = await section
        .locator('[data-resource-change]')
        .evaluateAll((items) =>
          items.map((item) => [
            item.getAttribute('data-resource-change'),
            item.getAttribute('data-change-kind'),
            item.querySelector('.change-mark')?.textContent,
          ]),
        );
      expect(resources).toEqual([
        ['aws_instance.web', 'replace', '-/+'],
        ['aws_s3_bucket.logs', 'create', '+'],
        ['module.db.aws_db_instance.main', 'update', '~'],
        ['module.db.aws_iam_user.old', 'delete', '-'],
      ]);

      // Folded until the person opens one.
      const db = section.locator('[data-resource-change="module.db.aws_db_instance.main"]');
      const password = db.locator('[data-attribute="password"]');
      expect(await password.isVisible()).toBe(false);
      await db.locator('summary').click();
      expect(await password.isVisible()).toBe(true);
      expect(await password.locator('[data-sensitive]').allTextContents()).toEqual(['(sensitive)', '(sensitive)']);
      expect((await db.locator('[data-attribute="port"]').textContent())?.replace(/\s+/g, ' ').trim()).toBe(
        '~ port 5432 → 5433',
      );
      expect(await db.locator('.attribute-diff').getAttribute('aria-label')).toBe(
        'Attribute changes of module.db.aws_db_instance.main',
      );
      expect(await db.textContent()).toContain('4 unchanged attribute(s) hidden');

      const web_ = section.locator('[data-resource-change="aws_instance.web"]');
      await web_.locator('summary').click();
      expect(await web_.locator('[data-attribute="ami"]').textContent()).toContain('forces replacement');
      expect(await web_.locator('[data-attribute="id"] [data-unknown]').textContent()).toBe('(known after apply)');
      expect(await web_.locator('summary').textContent()).toContain('replace_because_cannot_update');

      const output = section.locator('[data-output-change="db_password"]');
      await output.locator('summary').click();
      expect(await output.locator('[data-sensitive]').textContent()).toBe('(sensitive)');

      // The review sits with the changes.
      expect(await page.locator('[data-plan-review]').isVisible()).toBe(true);
      expect(await page.locator('[data-deploy-plan] button').isVisible()).toBe(true);
      expect(errors).toEqual([]);
      await screenshot(page, `plan-changes-${dialect}`);
    });

    it('fits a phone and passes axe-core', async () => {
      const jobId = (await (await server.userClient()).listJobs({ status: 'SUCCESS' }))[0]?.id as string;
      // A phone-sized context that lets axe-core's script in past the page's CSP, as the accessibility suite does.
      const context = await browser.browser.newContext({ viewport: { width: 375, height: 812 }, bypassCSP: true });
      const page = await context.newPage();
      await page.goto(`${web}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
      await page.goto(`${web}/jobs/${jobId}`);
      await page.locator('[data-resource-change="aws_s3_bucket.logs"] summary').click();
      expect(await page.locator('[data-attribute="bucket"]').isVisible()).toBe(true);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await screenshot(page, `plan-changes-phone-${dialect}`);

      await page.addScriptTag({ content: axeSource });
      const violations = await page.evaluate(async () => {
        type Violation = { id: string; impact: string | null; nodes: { target: string[] }[] };
        const axe = (window as unknown as { axe: { run(): Promise<{ violations: Violation[] }> } }).axe;
        const results = await axe.run();
        return results.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      });
      expect(violations).toEqual([]);
      await context.close();
    });

    it('a plan of an agent older than change documents keeps the list of addresses', async () => {
      const owner = await server.userClient();
      const job = await owner.createJob({ job_type: 'PLAN', configuration_id: vineId });
      await runPlan(job.id, null);
      await page.goto(`${web}/jobs/${job.id}`);
      expect(await page.locator('[data-plan-changes]').count()).toBe(0);
      expect(
        await page
          .locator('#resource-changes [data-resource-change]')
          .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-resource-change'))),
      ).toEqual(DOCUMENT.resource_changes.map((change) => change.address));
    });
  },
);
