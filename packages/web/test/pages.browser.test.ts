/**
 * The web interface in Debian's Chromium against a real control plane: signing in, every page of
 * the dashboard over records made by a real agent exchange (screenshots kept in
 * test-artifacts/screenshots), the buttons that plan, cancel, deploy a saved plan and destroy
 * through the JSON API, refusals shown on the page, and signing out.
 */
import type { TrellisClient } from '@trellis/client';
import type { Job, VineView } from '@trellis/core';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, clickAndFollow, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { PLAN_LOG, runJob } from './support/seed.js';
import { type AgentClient, BOOTSTRAP_TOKEN, vineyardWithVine, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the web pages suite');

describe.skipIf(!chromiumPath)('web pages in Chromium', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let server: WebServer;
  let browser: TestBrowser;
  let user: TrellisClient;
  let agent: AgentClient;
  let web: VineView;
  let savedPlan: Job;
  let failedPlan: Job;
  let planWithoutFile: Job;
  const contexts: BrowserContext[] = [];

  /** A signed-in page (the bootstrap link sets the session cookie in a fresh context). */
  async function signedInPage(): Promise<{ page: Page; errors: string[] }> {
    const { context, page, errors } = await browser.context();
    contexts.push(context);
    await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
    return { page, errors };
  }

  beforeAll(async () => {
    server = await new WebServer({
      signInProviders: [
        { id: 'github', name: 'GitHub' },
        { id: 'gitlab', name: 'GitLab' },
        { id: 'bitbucket', name: 'Bitbucket' },
        { id: 'google', name: 'Google' },
      ],
    }).start();
    browser = await TestBrowser.launch(chromiumPath as string);
    user = await server.userClient();
    agent = await server.agentClient(user, 'build-01');
    await agent.heartbeat('1.4.2');
    await server.agentClient(user, 'old-laptop');

    const production = await vineyardWithVine(user, 'web');
    web = production.vine;
    await runJob(
      user,
      agent,
      { job_type: 'PLAN', configuration_id: web.id },
      { logs: PLAN_LOG, artifact: true, status: 'SUCCESS' },
    );
    await runJob(
      user,
      agent,
      { job_type: 'DEPLOY', configuration_id: web.id },
      {
        logs: [...PLAN_LOG, ['Apply complete! Resources: 3 added, 0 changed, 0 destroyed.\n', 'STDOUT']],
        status: 'SUCCESS',
        execution_metadata: {
          cluster_name: 'prod-eu',
          cluster_endpoint: 'https://4F2A9C.gr7.eu-west-1.eks.amazonaws.com',
          argocd_url: 'https://argocd.example.com/applications/web',
          outputs: {
            region: { value: 'eu-west-1', type: 'string', sensitive: false },
            node_count: { value: 3, type: 'number', sensitive: false },
            db_password: { value: 'hunter2', type: 'string', sensitive: true },
          },
        },
      },
    );
    savedPlan = await runJob(
      user,
      agent,
      { job_type: 'PLAN', configuration_id: web.id },
      {
        logs: [['No changes. Your infrastructure matches the configuration.\n', 'STDOUT']],
        artifact: true,
        status: 'SUCCESS',
      },
    );

    const api = await user.createConfiguration({
      name: 'api',
      vineyard_id: production.vineyard.id,
      source: { type: 'git', url: 'https://git.example.com/platform/api-infra.git', ref: 'main', path: 'envs/prod' },
    });
    failedPlan = await runJob(
      user,
      agent,
      { job_type: 'PLAN', configuration_id: api.id },
      {
        logs: [
          ['Initializing the backend...\n', 'STDOUT'],
          ['Error: No valid credential sources found for AWS Provider.\n', 'STDERR'],
        ],
        status: 'FAILED',
        error_message: 'tofu plan exited with status 1',
      },
    );

    const staging = await vineyardWithVine(user, 'queue');
    planWithoutFile = await runJob(
      user,
      agent,
      { job_type: 'PLAN', configuration_id: staging.vine.id },
      { logs: [['Plan: 1 to add, 0 to change, 0 to destroy.\n', 'STDOUT']], status: 'SUCCESS' },
    );
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.close();
  });

  it('sends a visitor to the sign-in page, and back to the page asked for after signing in', async () => {
    const { context, page, errors } = await browser.context();
    contexts.push(context);
    await page.goto(`${server.url}/vineyards`);
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe('/signin?next=%2Fvineyards');
    const buttons = page.locator('.providers a');
    expect(await buttons.allTextContents()).toEqual([
      'Sign in with GitHub',
      'Sign in with GitLab',
      'Sign in with Bitbucket',
      'Sign in with Google',
    ]);
    expect(await buttons.first().getAttribute('href')).toBe('/auth/signin/github?next=%2Fvineyards');
    expect(await page.content()).not.toContain(BOOTSTRAP_TOKEN);
    await screenshot(page, 'signin');

    // A wrong token brings the page back, saying so, still headed for the same page.
    await page.fill('#bootstrap-token', 'not-the-token');
    await page.click('.bootstrap button[type=submit]');
    await page.locator('[data-signin-error="invalid_bootstrap_token"]').waitFor();
    expect(new URL(page.url()).searchParams.get('next')).toBe('/vineyards');
    await screenshot(page, 'signin-wrong-token');

    await page.fill('#bootstrap-token', BOOTSTRAP_TOKEN);
    await page.click('.bootstrap button[type=submit]');
    await page.waitForURL(`${server.url}/vineyards`);
    expect(await page.locator('.account .email').textContent()).toBe('admin@localhost');
    expect(errors).toEqual([]);
  });

  it('shows vineyards, vines with their deployment, jobs with their logs, and workers', async () => {
    const { page, errors } = await signedInPage();
    await page.goto(`${server.url}/vineyards`);
    expect(await page.locator('section.vineyard h2 a').allTextContents()).toEqual(['queue-yard', 'web-yard']);
    await screenshot(page, 'vineyards');

    await page.click('text=web-yard');
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(2);
    const row = (vine: string) =>
      rows.filter({ has: page.locator('td:first-child a', { hasText: new RegExp(`^${vine}$`) }) });
    expect(await row('web').locator('code').textContent()).toBe('https://4F2A9C.gr7.eu-west-1.eks.amazonaws.com');
    expect(await row('web').locator('a[target=_blank]').getAttribute('href')).toBe(
      'https://argocd.example.com/applications/web',
    );
    expect(await row('api').locator('.badge').allTextContents()).toEqual(['FAILED', 'FAILED']);
    await screenshot(page, 'vineyard');

    await page.click(`a[href="/configurations/${web.id}"]`);
    await page.waitForURL(`${server.url}/configurations/${web.id}`);
    expect(await page.locator('[data-argocd-link]').getAttribute('href')).toBe(
      'https://argocd.example.com/applications/web',
    );
    const outputs = await page.locator('table.outputs').textContent();
    expect(outputs).toContain('eu-west-1');
    expect(outputs).not.toContain('hunter2');
    expect(await page.content()).not.toContain('s3cret-value');
    expect(await page.locator('table.jobs tbody tr').count()).toBe(3);
    await screenshot(page, 'vine');

    await page.goto(`${server.url}/configurations/${failedPlan.vine_id}`);
    expect(await page.locator('[data-status-message]').textContent()).toBe('tofu plan exited with status 1');
    await screenshot(page, 'vine-failed');

    await page.goto(`${server.url}/jobs/${failedPlan.id}`);
    await page.waitForSelector('[data-stream-state].ended');
    expect(await page.locator('#log .chunk').allTextContents()).toEqual([
      'Initializing the backend...\n',
      'Error: No valid credential sources found for AWS Provider.\n',
    ]);
    expect(await page.locator('#log .stream-stderr').count()).toBe(1);
    expect(await page.locator('[data-job-error]').textContent()).toBe('tofu plan exited with status 1');
    await screenshot(page, 'job-failed');

    await page.goto(`${server.url}/jobs`);
    expect(await page.locator('table.jobs tbody tr').count()).toBe(5);
    await screenshot(page, 'jobs');

    await page.goto(`${server.url}/workers`);
    const workers = page.locator('table.workers tbody tr');
    expect(await workers.filter({ hasText: 'build-01' }).locator('.badge').textContent()).toBe('ONLINE');
    expect(await workers.filter({ hasText: 'build-01' }).textContent()).toContain('1.4.2');
    expect(await workers.filter({ hasText: 'old-laptop' }).locator('.badge').textContent()).toBe('OFFLINE');
    await screenshot(page, 'workers');
    expect(errors).toEqual([]);
  });

  it('plans and cancels, deploys the saved plan and destroys with the buttons', async () => {
    const { page, errors } = await signedInPage();
    page.on('dialog', (dialog) => dialog.accept());

    await page.goto(`${server.url}/configurations/${web.id}`);
    const planId = (await clickAndFollow(page, 'button[data-create-job="PLAN"]')).pathname.split('/').pop() as string;
    expect((await user.getJob(planId)).job_type).toBe('PLAN');
    await page.waitForSelector('#job-status[data-status="QUEUED"]');
    // Cancelling asks first, on a page of its own (no script needed), then shows the job again.
    await clickAndFollow(page, '[data-cancel-job] button');
    expect(await page.locator('[data-confirmation]').textContent()).toContain('Cancel this job?');
    const cancelled = await clickAndFollow(page, '[data-confirm-yes]');
    expect(cancelled.pathname).toBe(`/jobs/${planId}`);
    await page.waitForSelector('#job-status[data-status="CANCELLED"]');
    expect(await page.locator('[data-cancel-job]').count()).toBe(0);
    expect((await user.getJob(planId)).status).toBe('CANCELLED');

    await page.goto(`${server.url}/jobs/${savedPlan.id}`);
    await page.waitForSelector('[data-stream-state].ended');
    expect(await page.locator('[data-plan-summary]').textContent()).toBe('No changes.');
    await screenshot(page, 'job-plan');
    const deployUrl = await clickAndFollow(page, '[data-deploy-plan] button');
    const deploy = await user.getJob(deployUrl.pathname.split('/').pop() as string);
    expect(deploy).toMatchObject({ job_type: 'DEPLOY', plan_job_id: savedPlan.id, status: 'QUEUED' });
    await screenshot(page, 'job-queued');
    await user.cancelJob(deploy.id);

    await page.goto(`${server.url}/configurations/${web.id}`);
    // Destroying asks for the vine's name first; a wrong one destroys nothing.
    await clickAndFollow(page, 'button[data-create-job="DESTROY"]');
    await page.fill('#action-confirm', 'not-web');
    await Promise.all([page.waitForNavigation(), page.click('[data-confirm-yes]')]);
    expect(await page.locator('[data-field-error="action-confirm"]').textContent()).toContain('type web to confirm');
    await page.fill('#action-confirm', web.name);
    const destroyUrl = await clickAndFollow(page, '[data-confirm-yes]');
    expect((await user.getJob(destroyUrl.pathname.split('/').pop() as string)).job_type).toBe('DESTROY');
    expect(errors).toEqual([]);
  });

  it("shows the API's refusal on the page when a plan cannot be deployed", async () => {
    const { page } = await signedInPage();
    await page.goto(`${server.url}/jobs/${planWithoutFile.id}`);
    await page.waitForSelector('[data-stream-state].ended');
    expect(await page.locator('[data-plan-summary]').textContent()).toBe('1 to add, 0 to change, 0 to destroy');
    // A plain form: core's refusal comes back as a page with its detail and code, and the way back.
    const [response] = await Promise.all([
      page.waitForResponse((answer) => answer.request().method() === 'POST'),
      page.click('[data-deploy-plan] button'),
    ]);
    expect(response.status()).toBe(409);
    const alert = page.locator('[data-action-error]');
    await alert.waitFor({ state: 'visible' });
    expect(await alert.textContent()).toBe('the plan job has not succeeded with a plan artifact [plan_not_ready]');
    expect(await page.getAttribute('[data-refused-back]', 'href')).toBe(`/jobs/${planWithoutFile.id}`);
    await screenshot(page, 'job-refused');
  });

  it('signs out: the cookie is gone and pages ask to sign in again', async () => {
    const { page, errors } = await signedInPage();
    await page.goto(`${server.url}/workers`);
    await page.click('form[data-signout] button');
    await page.waitForURL(`${server.url}/signin`);
    expect(await page.context().cookies()).toEqual([]);
    await page.goto(`${server.url}/workers`);
    expect(new URL(page.url()).pathname).toBe('/signin');
    expect(errors).toEqual([]);
  });
});
