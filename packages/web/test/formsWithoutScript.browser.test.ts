/**
 * Every change the vine and job pages offer is a plain form (issue 29), in Chromium with JavaScript
 * turned off, against a real control plane on SQLite and Postgres: plan, cancel (asked first on a
 * page of its own), the drift schedule, approvals, the repository-free settings, editing a vine (a
 * refusal shows core's problem and keeps what was typed), destroy (the vine's name typed first) and
 * signing out. No control on these pages needs the script.
 */
import type { TrellisClient } from '@trellis/client';
import type { VineView } from '@trellis/core';
import { checkTestPostgres } from '@trellis/testkit';
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
import { BOOTSTRAP_TOKEN, vineyardWithVine, type WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the forms without script suite');
const postgres = await checkTestPostgres();

describeInChromiumOnEachDialect(
  'changing things from the vine and job pages without script',
  { chromiumPath, postgres, timeout: BROWSER_TEST_TIMEOUT_MS },
  (dialect) => {
    let site: WebOnDialect;
    let server: WebServer;
    let web: string;
    let page: Page;
    let user: TrellisClient;
    let vine: VineView;

    beforeAll(async () => {
      site = await startWebOnDialect(dialect, chromiumPath as string);
      ({ server } = site);
      web = server.url;
      page = await (await site.newContext({ javaScriptEnabled: false })).newPage();
      await page.goto(`${web}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
      user = await server.userClient();
      ({ vine } = await vineyardWithVine(user, 'scriptless'));
    }, 90_000);

    afterAll(async () => {
      await site?.close();
    });

    it('offers no control that needs the script on the vine and job pages', async () => {
      await page.goto(`${web}/configurations/${vine.id}`);
      expect(await page.locator('button[type=button]').count()).toBe(0);
      expect(await page.locator('button:not(form button)').count()).toBe(0);
      const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      await page.goto(`${web}/jobs/${job.id}`);
      expect(await page.locator('button:not(form button)').count()).toBe(0);
      await user.cancelJob(job.id);
    });

    it('plans, then cancels the plan after saying yes on the page that asks', async () => {
      await page.goto(`${web}/configurations/${vine.id}`);
      const planUrl = await clickAndFollow(page, 'button[data-create-job="PLAN"]');
      const planId = planUrl.pathname.split('/').pop() as string;
      expect(await user.getJob(planId)).toMatchObject({ job_type: 'PLAN', status: 'QUEUED' });

      // "Cancel" changes nothing until the question is answered.
      await clickAndFollow(page, '[data-cancel-job] button');
      expect(await page.locator('[data-confirmation]').textContent()).toContain('Cancel this job?');
      await screenshot(page, 'job-cancel-confirm');
      expect((await user.getJob(planId)).status).toBe('QUEUED');
      await clickAndFollow(page, '[data-confirm-cancel]');
      expect(new URL(page.url()).pathname).toBe(`/jobs/${planId}`);
      expect((await user.getJob(planId)).status).toBe('QUEUED');

      await clickAndConfirm(page, '[data-cancel-job] button');
      expect(new URL(page.url()).pathname).toBe(`/jobs/${planId}`);
      expect(await page.locator('#job-status').getAttribute('data-status')).toBe('CANCELLED');
      expect(await page.locator('[data-cancel-job]').count()).toBe(0);
    });

    it('sets and turns off the drift schedule, and requires approvals', async () => {
      await page.goto(`${web}/configurations/${vine.id}`);
      await page.fill('input[name="interval_minutes"]', '720');
      await clickAndFollow(page, '[data-drift-save]');
      expect(await page.locator('[data-drift-schedule]').textContent()).toMatch(/^every 720 minutes/);
      expect((await user.getConfiguration(vine.id)).drift_detection).toEqual({ interval_minutes: 720 });

      await Promise.all([page.waitForNavigation(), page.click('[data-drift-off]')]);
      expect(await page.locator('[data-drift-schedule]').textContent()).toMatch(/^off /);
      expect((await user.getConfiguration(vine.id)).drift_detection).toBeNull();

      await page.check('form[data-approval-settings] input[name="required"]');
      await Promise.all([page.waitForNavigation(), page.click('[data-approval-save]')]);
      expect(await page.locator('[data-approval-setting]').getAttribute('data-approval-setting')).toBe('required');
      expect((await user.getConfiguration(vine.id)).approval).toEqual({ required: true, separate_approver: false });
      await page.uncheck('form[data-approval-settings] input[name="required"]');
      await Promise.all([page.waitForNavigation(), page.click('[data-approval-save]')]);
      expect((await user.getConfiguration(vine.id)).approval).toBeNull();
    });

    it("edits a vine; a refusal shows core's problem and keeps what was typed", async () => {
      await page.goto(`${web}/configurations/${vine.id}/edit`);
      await page.fill('input[name=name]', 'Bad Name!');
      await page.fill('input[name=new_name]', 'region');
      await page.fill('input[name=new_value]', 'eu-west-1');
      const [refused] = await Promise.all([page.waitForNavigation(), page.click('[data-vine-save]')]);
      expect(refused?.status()).toBe(400);
      expect(await page.locator('[data-action-error]').textContent()).toContain('[validation_failed]');
      expect(await page.inputValue('input[name=name]')).toBe('Bad Name!');
      expect((await user.getConfiguration(vine.id)).name).toBe('scriptless');

      await page.fill('input[name=name]', 'scriptless-2');
      await page.fill('input[name=new_name]', 'region');
      await page.fill('input[name=new_value]', 'eu-west-1');
      const saved = await clickAndFollow(page, '[data-vine-save]');
      expect(saved.pathname).toBe(`/configurations/${vine.id}`);
      expect(await user.getConfiguration(vine.id)).toMatchObject({
        name: 'scriptless-2',
        variables: { region: { value: 'eu-west-1', sensitive: false } },
      });
    });

    it("destroys only once the vine's name is typed", async () => {
      await page.goto(`${web}/configurations/${vine.id}`);
      await clickAndFollow(page, 'button[data-create-job="DESTROY"]');
      await page.fill('#action-confirm', 'scriptless');
      const [wrong] = await Promise.all([page.waitForNavigation(), page.click('[data-confirm-yes]')]);
      expect(wrong?.status()).toBe(400);
      expect(await page.locator('[data-field-error="action-confirm"]').textContent()).toContain(
        'type scriptless-2 to confirm',
      );
      expect((await user.listJobs({ vine_id: vine.id })).some((job) => job.job_type === 'DESTROY')).toBe(false);
      await screenshot(page, 'vine-destroy-confirm');

      await page.fill('#action-confirm', 'scriptless-2');
      const destroyUrl = await clickAndFollow(page, '[data-confirm-yes]');
      const destroy = await user.getJob(destroyUrl.pathname.split('/').pop() as string);
      expect(destroy).toMatchObject({ job_type: 'DESTROY', status: 'QUEUED', vine_id: vine.id });
      await user.cancelJob(destroy.id);
    });

    it('signs out', async () => {
      await page.goto(`${web}/workers`);
      await clickAndFollow(page, 'form[data-signout] button');
      expect(new URL(page.url()).pathname).toBe('/signin');
      await page.goto(`${web}/workers`);
      expect(new URL(page.url()).pathname).toBe('/signin');
    });
  },
);
