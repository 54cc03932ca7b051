/**
 * The job queue in the web interface (issue 29), in Chromium against a real control plane on
 * SQLite and Postgres: the Queue page lists the queued jobs in the order the agents claim them,
 * with the agent pool that can take each and why it waits, each linked to its job, whose page says
 * its position; the table scrolls in its own labelled region on a phone.
 */
import type { TrellisClient } from '@trellis/client';
import type { Job, VineView } from '@trellis/core';
import { checkTestPostgres } from '@trellis/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, findChromium, screenshot } from './support/browser.js';
import { describeInChromiumOnEachDialect, startWebOnDialect, type WebOnDialect } from './support/dialectSuite.js';
import { type AgentClient, MAIN_TF, vineyardWithVine, type WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the queue page suite');
const postgres = await checkTestPostgres();

describeInChromiumOnEachDialect(
  'the job queue page',
  { chromiumPath, postgres, timeout: BROWSER_TEST_TIMEOUT_MS },
  (dialect) => {
    let site: WebOnDialect;
    let server: WebServer;
    let user: TrellisClient;
    let agent: AgentClient;
    let web: VineView;
    let api: VineView;
    let jobs: { webFirst: Job; apiPlan: Job; webSecond: Job };

    const signedInPage = (viewport?: { width: number; height: number }) => site.signedInPage(viewport);

    /** The rows of the queue table: job id, position and why it waits, top to bottom. */
    const rows = (page: Page) =>
      page.locator('table.queue tbody tr').evaluateAll((trs) =>
        trs.map((tr) => ({
          job: tr.getAttribute('data-queue-job'),
          position: tr.querySelector('[data-position]')?.textContent?.trim(),
          waiting: tr.querySelector('[data-waiting-for]')?.getAttribute('data-waiting-for'),
        })),
      );

    beforeAll(async () => {
      site = await startWebOnDialect(dialect, chromiumPath as string);
      ({ server } = site);
      user = await server.userClient();
      const created = await vineyardWithVine(user, 'queue-web');
      web = created.vine;
      api = await user.createConfiguration({
        name: 'queue-api',
        vineyard_id: created.vineyard.id,
        source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
      });
      agent = await server.agentClient(user, 'queue-agent');
      await agent.heartbeat('1.0.0', []);
      jobs = {
        webFirst: await user.createJob({ job_type: 'PLAN', configuration_id: web.id }),
        apiPlan: await user.createJob({ job_type: 'PLAN', configuration_id: api.id }),
        webSecond: await user.createJob({ job_type: 'PLAN', configuration_id: web.id }),
      };
    }, 60_000);

    afterAll(async () => {
      await site?.close();
    });

    it('lists the queued jobs in claim order with their agent pool and why they wait, linked to their pages', async () => {
      const page = await signedInPage();
      await page.goto(`${server.url}/vineyards`);
      await page.locator('header nav a', { hasText: 'Queue' }).click();
      await page.waitForURL(`${server.url}/queue`);
      expect(await page.locator('header nav a[aria-current="page"]').textContent()).toBe('Queue');
      expect(await page.locator('[data-queue-total]').textContent()).toContain('3 jobs are queued');
      expect(await rows(page)).toEqual([
        { job: jobs.webFirst.id, position: '1', waiting: 'none' },
        { job: jobs.apiPlan.id, position: '2', waiting: 'none' },
        { job: jobs.webSecond.id, position: '3', waiting: 'vine_busy' },
      ]);
      const first = page.locator(`#queue-${jobs.webFirst.id}`);
      expect(await first.locator('[data-pool="personal"]').textContent()).toContain('your agents');
      expect(await first.locator('[data-pool-agents]').textContent()).toBe('1 idle, 1 online of 1');
      expect(await first.textContent()).toContain('queue-web');
      const second = page.locator(`#queue-${jobs.webSecond.id} [data-waiting-for]`);
      expect(await second.textContent()).toContain(
        `job ${jobs.webFirst.id} (PLAN) was queued on the configuration before this one`,
      );
      expect(await second.locator('a').getAttribute('href')).toBe(`/jobs/${jobs.webFirst.id}`);
      // The table scrolls in a region a keyboard can reach, named for screen readers.
      const region = page.locator('.table-scroll[role="region"]');
      expect(await region.getAttribute('aria-label')).toBe('Queued jobs');
      expect(await region.getAttribute('tabindex')).toBe('0');
      await screenshot(page, 'queue');

      // Each job links to its page, which says its position.
      await page.locator(`#queue-${jobs.webSecond.id} td:nth-child(2) a`).click();
      await page.waitForURL(`${server.url}/jobs/${jobs.webSecond.id}`);
      expect(await page.locator('[data-queue-position]').getAttribute('data-queue-position')).toBe('3');
      expect(await page.locator('[data-queue-position]').textContent()).toContain('Queue position 3');
      expect(await page.locator('[data-waiting-for]').getAttribute('data-waiting-for')).toBe('vine_busy');
    });

    it('moves up as the agent claims position 1, and says the agents are busy', async () => {
      const page = await signedInPage();
      await page.goto(`${server.url}/jobs/${jobs.webFirst.id}`);
      const note = page.locator('[data-queue-position]');
      expect(await note.getAttribute('data-queue-position')).toBe('1');
      expect(await note.textContent()).toContain('An idle agent takes it at its next claim.');
      expect((await agent.claimJob())?.job.id).toBe(jobs.webFirst.id);
      // The job's page drops its place in the queue as soon as it runs (the live status).
      await note.waitFor({ state: 'hidden' });
      await page.goto(`${server.url}/queue`);
      expect(await rows(page)).toEqual([
        { job: jobs.apiPlan.id, position: '1', waiting: 'agents_busy' },
        { job: jobs.webSecond.id, position: '2', waiting: 'vine_busy' },
      ]);
      expect(await page.locator(`#queue-${jobs.apiPlan.id} [data-pool-agents]`).textContent()).toBe(
        '0 idle, 1 online of 1',
      );
      await page.goto(`${server.url}/jobs/${jobs.apiPlan.id}`);
      expect(await page.locator('[data-queue-position]').getAttribute('data-queue-position')).toBe('1');
      // A job that runs has no position.
      await page.goto(`${server.url}/jobs/${jobs.webFirst.id}`);
      expect(await page.locator('[data-queue-position]').count()).toBe(0);
    });

    it('fits a phone: the table scrolls in its region, the page does not', async () => {
      const page = await signedInPage({ width: 375, height: 812 });
      await page.goto(`${server.url}/queue`);
      const widths = await page.evaluate(() => {
        const region = document.querySelector('.table-scroll') as HTMLElement;
        return {
          page: document.documentElement.scrollWidth - window.innerWidth,
          table: region.scrollWidth - region.clientWidth,
        };
      });
      expect(widths.page).toBeLessThanOrEqual(0);
      expect(widths.table).toBeGreaterThan(0);
      await screenshot(page, 'queue-phone');
      for (const id of [jobs.webFirst.id, jobs.apiPlan.id, jobs.webSecond.id]) await user.cancelJob(id);
      await page.reload();
      expect(await page.locator('[data-queue-empty]').count()).toBe(1);
    });
  },
);
