/**
 * Git-driven jobs in the web interface (issue 13), in Chromium against a real control plane: a
 * signed push and a signed pull request delivered to the webhook endpoint, then the job pages
 * (trigger, commit, pull request link; no deploy offered for the speculative plan) and the commit
 * column of the vine page's jobs.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TrellisClient } from '@trellis/client';
import type { VineView } from '@trellis/core';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { BOOTSTRAP_TOKEN, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the git-driven jobs suite');
const REPO = 'acme-platform/infra-live';
const PUSH_SHA = '8457785ada4ab6182c16fbac60586081edf51999';
const PR_HEAD = '8b0baff713ddef5e79d9db0f3fa713ee8bd94512';
const FIXTURES = new URL('../../../test-fixtures/vcs/github/', import.meta.url);

describe.skipIf(!chromiumPath)('git-driven jobs in the web pages', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let server: WebServer;
  let browser: TestBrowser;
  let user: TrellisClient;
  let vine: VineView;
  let pushJob: string;
  let prJob: string;
  /** The webhook secret and hook path of the manual connection (shown once). */
  let secret = '';
  let hookPath = '';
  const contexts: BrowserContext[] = [];

  async function signedInPage(): Promise<Page> {
    const { context, page } = await browser.context();
    contexts.push(context);
    await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
    return page;
  }

  async function deliver(event: string, fixture: string): Promise<string> {
    const body = readFileSync(new URL(`${fixture}.json`, FIXTURES));
    const answer = await fetch(`${server.url}${hookPath}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': event,
        'x-github-delivery': `web-${fixture}`,
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      },
      body,
    });
    expect(answer.status).toBe(202);
    const { jobs } = (await answer.json()) as { jobs: string[] };
    expect(jobs).toHaveLength(1);
    return jobs[0] as string;
  }

  beforeAll(async () => {
    server = await new WebServer({
      env: { TRELLIS_GITHUB_CLIENT_ID: 'gh-client', TRELLIS_GITHUB_CLIENT_SECRET: 'gh-secret' },
    }).start();
    browser = await TestBrowser.launch(chromiumPath as string);
    user = await server.userClient();
    const vineyard = await user.createVineyard('git-web');
    vine = await user.createConfiguration({
      name: 'infra-live',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': 'output "x" { value = 1 }\n' } },
    });
    const connection = await user.connectRepository(vine.id, {
      provider: 'github',
      repository: REPO,
      branch: 'main',
      webhook: 'manual',
    });
    secret = connection.webhook_secret as string;
    hookPath = new URL(connection.webhook_url).pathname + new URL(connection.webhook_url).search;
    pushJob = await deliver('push', 'push');
    prJob = await deliver('pull_request', 'pull_request-opened');
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.close();
  });

  it("a push's job page shows the trigger, the commit with its message and author", async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/jobs/${pushJob}`);
    expect(await page.locator('h1').textContent()).toContain('Plan (push)');
    expect(await page.locator('[data-trigger]').getAttribute('data-trigger')).toBe('push');
    expect(await page.locator('[data-trigger]').textContent()).toBe(`push to main of ${REPO} (GitHub)`);
    const commit = page.locator('[data-commit-facts]');
    expect(await commit.textContent()).toBe('8457785 dns: add the status page record by Rosa Moreau');
    expect(await commit.locator('code').getAttribute('title')).toBe(PUSH_SHA);
    expect(await page.locator('[data-pull-request]').count()).toBe(0);
    await screenshot(page, 'git-push-job');
  });

  it("a pull request's job page links the pull request and offers no deploy", async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/jobs/${prJob}`);
    expect(await page.locator('h1').textContent()).toContain('Speculative plan (pull request #42)');
    expect(await page.locator('[data-speculative]').count()).toBe(1);
    expect(await page.locator('[data-commit-facts] code').getAttribute('title')).toBe(PR_HEAD);
    const link = page.locator('[data-pull-request] a');
    expect(await link.getAttribute('href')).toBe(`https://github.com/${REPO}/pull/42`);
    expect(await link.textContent()).toBe('#42 Move the NAT gateways to two zones');
    expect(await page.locator('[data-deploy-plan]').count()).toBe(0);
    await screenshot(page, 'git-pull-request-job');
  });

  it("the vine page's jobs show their commit", async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/configurations/${vine.id}`);
    const rowOf = (id: string) => page.locator('table.jobs tr', { has: page.locator(`a[href$="/jobs/${id}"]`) });
    expect(await rowOf(pushJob).locator('[data-commit]').textContent()).toBe('8457785');
    expect(await rowOf(prJob).locator('[data-commit]').textContent()).toBe('8b0baff');
    expect(await page.locator('table.jobs th').allTextContents()).toContain('Commit');
    await screenshot(page, 'git-vine-jobs');
  });
});
