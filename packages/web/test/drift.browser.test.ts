/**
 * Drift in the web interface, in Chromium against a real control plane: the drift badge on the
 * vine page and on the vineyard page's vine rows, the drift facts, and the "Check drift" button,
 * which queues a drift check through the JSON API.
 */
import type { TrellisClient } from '@trellis/client';
import type { Job, VineView } from '@trellis/core';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, clickAndFollow, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { runJob } from './support/seed.js';
import { type AgentClient, BOOTSTRAP_TOKEN, vineyardWithVine, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the drift pages suite');

describe.skipIf(!chromiumPath)('drift in the web pages', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let server: WebServer;
  let browser: TestBrowser;
  let user: TrellisClient;
  let agent: AgentClient;
  let web: VineView;
  let vineyardId: string;
  const contexts: BrowserContext[] = [];

  async function signedInPage(): Promise<Page> {
    const { context, page } = await browser.context();
    contexts.push(context);
    await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
    return page;
  }

  /** Claims the drift check `job` and reports the plan's counts. */
  async function finishCheck(job: Job, changes: { add: number; change: number; destroy: number }) {
    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(job.id);
    await agent.reportStatus(job.id, { status: 'SUCCESS', execution_metadata: { plan_summary: changes } });
  }

  beforeAll(async () => {
    server = await new WebServer().start();
    browser = await TestBrowser.launch(chromiumPath as string);
    user = await server.userClient();
    agent = await server.agentClient(user, 'drift-agent');
    const created = await vineyardWithVine(user, 'web');
    web = created.vine;
    vineyardId = created.vineyard.id;
    await runJob(user, agent, { job_type: 'DEPLOY', configuration_id: web.id }, { status: 'SUCCESS' });
    await user.updateConfiguration(web.id, { drift_detection: { interval_minutes: 360 } });
    await finishCheck(await user.checkDrift(web.id), { add: 0, change: 2, destroy: 1 });
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.stop();
  });

  it('shows a drifted badge and the counts on the vine page and on the vineyard page', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/configurations/${web.id}`);
    const badge = page.locator('.title-row [data-drift]');
    expect(await badge.getAttribute('data-drift')).toBe('drifted');
    expect(await badge.textContent()).toBe('drifted');
    expect(await page.locator('[data-drift-changes]').textContent()).toBe('0 to add, 2 to change, 1 to destroy');
    expect(await page.locator('[data-drift-schedule]').textContent()).toMatch(
      /^every 360 minutes, next \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
    );
    // The drift check is a plan that can never be deployed: no "Deploy plan" button offers it.
    expect(await page.locator('[data-plan-job-id]').count()).toBe(0);
    await screenshot(page, 'drift-vine-drifted');

    await page.goto(`${server.url}/vineyards/${vineyardId}`);
    const row = page.locator('tr', { has: page.locator(`a[href$="/configurations/${web.id}"]`) });
    expect(await row.locator('[data-drift]').textContent()).toBe('drifted');
    await screenshot(page, 'drift-vineyard-rows');
  });

  it('"Check drift" queues a drift check; once in sync the badge says so', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/configurations/${web.id}`);
    const url = await clickAndFollow(page, '[data-drift-check]');
    const jobId = url.pathname.split('/').pop() as string;
    const job = await user.getJob(jobId);
    expect(job).toMatchObject({ job_type: 'PLAN', status: 'QUEUED', trigger: { type: 'drift' }, vine_id: web.id });
    await finishCheck(job, { add: 0, change: 0, destroy: 0 });
    await page.goto(`${server.url}/configurations/${web.id}`);
    expect(await page.locator('.title-row [data-drift]').textContent()).toBe('in sync');
    expect(await page.locator('table').last().textContent()).toContain('Drift check');
    await screenshot(page, 'drift-vine-in-sync');
  });

  it('an admin sets and turns off the drift schedule from the vine page', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/configurations/${web.id}`);
    await page.fill('input[name="interval_minutes"]', '30');
    await page.click('[data-drift-save]');
    // The browser holds an interval under 60 minutes back (the API would refuse it too).
    expect(await page.locator('input[name="interval_minutes"]:invalid').count()).toBe(1);
    expect((await user.getConfiguration(web.id)).drift_detection).toEqual({ interval_minutes: 360 });

    // htmx sends the form and re-renders the section in place (the page is not loaded again).
    await page.evaluate(() => {
      (window as unknown as { stayed: boolean }).stayed = true;
    });
    await page.fill('input[name="interval_minutes"]', '720');
    await page.click('[data-drift-save]');
    await page.locator('[data-drift-schedule]', { hasText: /^every 720 minutes, next / }).waitFor();
    expect((await user.getConfiguration(web.id)).drift_detection).toEqual({ interval_minutes: 720 });

    await page.click('[data-drift-off]');
    await page.locator('[data-drift-schedule]', { hasText: /^off / }).waitFor();
    expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);

    // Core's refusal shows inside the form, in place (the browser's own check taken off to reach core).
    await page.fill('input[name="interval_minutes"]', '30');
    await page.evaluate(() => document.querySelector('input[name="interval_minutes"]')?.removeAttribute('min'));
    await page.click('[data-drift-save]');
    const refusal = page.locator('[data-drift-settings] [data-form-slot] [data-action-error]');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('[validation_failed]');
    expect((await user.getConfiguration(web.id)).drift_detection).toBeNull();
    expect((await user.getConfiguration(web.id)).drift_detection).toBeNull();
    await screenshot(page, 'drift-settings-off');
  });

  it('a destroyed vine shows no drift badge, on its page and on the vineyard page', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/configurations/${web.id}`);
    expect(await page.locator('.title-row [data-drift]').count()).toBe(1);
    await runJob(user, agent, { job_type: 'DESTROY', configuration_id: web.id }, { status: 'SUCCESS' });
    await page.goto(`${server.url}/configurations/${web.id}`);
    expect(await page.locator('.title-row').textContent()).toContain('DESTROYED');
    expect(await page.locator('[data-drift]').count()).toBe(0);
    expect(await page.locator('[data-drift-check]').count()).toBe(0);
    expect(await page.locator('[data-drift-section]').textContent()).toContain('never checked');
    expect(await page.locator('[data-deployment]').textContent()).toContain('Destroyed: nothing is deployed.');
    await screenshot(page, 'drift-vine-destroyed');
    await page.goto(`${server.url}/vineyards/${vineyardId}`);
    const row = page.locator('tr', { has: page.locator(`a[href$="/configurations/${web.id}"]`) });
    expect(await row.locator('[data-drift]').count()).toBe(0);
  });
});
