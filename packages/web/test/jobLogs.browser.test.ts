/**
 * The job page's live log in Chromium (DESIGN §6): chunks appear as an agent posts them, the three
 * streams look different, the view follows the tail unless the reader scrolled up, and when the
 * control plane restarts the page reconnects and shows every chunk once, in order.
 */
import type { TrellisClient } from '@trellis/client';
import type { Job, LogChunk } from '@trellis/core';
import { FakeClock } from '@trellis/testkit';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { type AgentClient, BOOTSTRAP_TOKEN, vineyardWithVine, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the live log suite');

/** Waits until the log shows `count` chunks. */
async function chunksShown(page: Page, count: number, timeout = 10_000): Promise<void> {
  await page.waitForFunction((n) => document.querySelectorAll('#log .chunk').length >= n, count, { timeout });
}

/** Every chunk in the page, as the reader sees it. */
function shownChunks(page: Page): Promise<{ id: number; text: string; stream: string }[]> {
  return page.$$eval('#log .chunk', (spans) =>
    spans.map((span) => ({
      id: Number((span as HTMLElement).dataset.id),
      text: span.textContent ?? '',
      stream: span.className.replace('chunk stream-', ''),
    })),
  );
}

describe.skipIf(!chromiumPath)('live job log in Chromium', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let server: WebServer;
  let browser: TestBrowser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let user: TrellisClient;
  let agent: AgentClient;
  let job: Job;
  // Time moves only when a test says so (the session's end, in the last test).
  const clock = new FakeClock(new Date());

  beforeAll(async () => {
    server = await new WebServer({ clock }).start();
    browser = await TestBrowser.launch(chromiumPath as string);
    user = await server.userClient();
    agent = await server.agentClient(user, 'runner');
    const { vine } = await vineyardWithVine(user, 'live');
    job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    expect((await agent.claimJob())?.job.id).toBe(job.id);
    ({ context, page, errors } = await browser.context());
    await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}&next=/jobs/${job.id}`);
    await page.waitForSelector('[data-stream-state].live');
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await server?.close();
  });

  it('shows chunks as the agent posts them, STDERR and SYSTEM apart, following the tail', async () => {
    expect(await page.textContent('#job-status')).toBe('PROCESSING');
    await agent.appendLog(job.id, 'Initializing the backend...\n', 'STDOUT');
    await agent.appendLog(job.id, 'Warning: Argument is deprecated\n', 'STDERR');
    await agent.appendLog(job.id, 'engine started: tofu 1.9.0\n', 'SYSTEM');
    await chunksShown(page, 3);
    expect((await shownChunks(page)).map(({ text, stream }) => [text, stream])).toEqual([
      ['Initializing the backend...\n', 'stdout'],
      ['Warning: Argument is deprecated\n', 'stderr'],
      ['engine started: tofu 1.9.0\n', 'system'],
    ]);
    const style = (selector: string) =>
      page.$eval(selector, (element) => {
        const computed = getComputedStyle(element);
        return { color: computed.color, fontStyle: computed.fontStyle };
      });
    const stdout = await style('#log .stream-stdout');
    const stderr = await style('#log .stream-stderr');
    const system = await style('#log .stream-system');
    expect(stderr.color).toBe('rgb(255, 139, 128)');
    expect(stderr.color).not.toBe(stdout.color);
    expect(system.fontStyle).toBe('italic');
    expect(system.color).not.toBe(stdout.color);

    // More than the log box holds: the view stays on the newest line.
    for (let i = 0; i < 12; i++) {
      const lines = Array.from({ length: 5 }, (_, j) => `  + resource "null_resource" "n${i * 5 + j}"\n`).join('');
      await agent.appendLog(job.id, lines, 'STDOUT');
    }
    await chunksShown(page, 15);
    const atBottom = () =>
      page.$eval('#log', (log) => Math.abs(log.scrollHeight - log.clientHeight - log.scrollTop) <= 2);
    expect(await page.$eval('#log', (log) => log.scrollHeight > log.clientHeight)).toBe(true);
    expect(await atBottom()).toBe(true);
    await screenshot(page, 'job-live');

    // A reader who scrolled up to read is left where they are.
    await page.$eval('#log', (log) => {
      log.scrollTop = 0;
    });
    await agent.appendLog(job.id, 'still planning...\n', 'SYSTEM');
    await chunksShown(page, 16);
    expect(await page.$eval('#log', (log) => log.scrollTop)).toBe(0);
    await page.$eval('#log', (log) => {
      log.scrollTop = log.scrollHeight;
    });
    expect(errors).toEqual([]);
  });

  it('reconnects after the control plane restarts and shows every chunk once, in order', async () => {
    await server.stop();
    await page.waitForSelector('[data-stream-state].retrying');
    expect(await page.textContent('[data-stream-state]')).toBe('connection lost, reconnecting…');
    await server.start();

    // Posted while the page is still away: it must get them from where it stopped.
    for (let i = 0; i < 3; i++) await agent.appendLog(job.id, `after restart ${i}\n`, 'STDOUT');
    await page.waitForSelector('[data-stream-state].live', { timeout: 30_000 });
    for (let i = 3; i < 6; i++) await agent.appendLog(job.id, `after restart ${i}\n`, i === 4 ? 'STDERR' : 'STDOUT');
    await agent.appendLog(job.id, 'Plan: 60 to add, 0 to change, 0 to destroy.\n', 'STDOUT');
    await agent.reportStatus(job.id, { status: 'SUCCESS' });
    await page.waitForSelector('[data-stream-state].ended');

    const stored: LogChunk[] = (await user.getJobLogs(job.id)).logs;
    const shown = await shownChunks(page);
    expect(shown.map((chunk) => chunk.id)).toEqual(stored.map((chunk) => chunk.id));
    expect(shown.map((chunk) => chunk.text)).toEqual(stored.map((chunk) => chunk.log_chunk));
    expect(shown.slice(-7).map((chunk) => chunk.text)).toEqual([
      ...Array.from({ length: 6 }, (_, i) => `after restart ${i}\n`),
      'Plan: 60 to add, 0 to change, 0 to destroy.\n',
    ]);
    expect(await page.textContent('#job-status')).toBe('SUCCESS');
    expect(await page.textContent('[data-plan-summary]')).toBe('60 to add, 0 to change, 0 to destroy');
    // What the ended plan offers comes from the page again (htmx), as core decides it.
    await page.locator('[data-deploy-plan]').waitFor();
    expect(await page.isHidden('[data-cancel-job]')).toBe(true);
    await screenshot(page, 'job-after-restart');
    expect(errors).toEqual([]);
  });

  it('stops reconnecting once the session is over, and says so', async () => {
    const { vine } = await vineyardWithVine(user, 'expiring');
    const running = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    expect((await agent.claimJob())?.job.id).toBe(running.id);
    await page.goto(`${server.url}/jobs/${running.id}`);
    await page.waitForSelector('[data-stream-state].live');

    clock.advance({ hours: 13 });
    await server.stop();
    await server.start();
    await page.waitForSelector('[data-stream-state].ended', { timeout: 60_000 });
    expect(await page.textContent('[data-stream-state]')).toBe('signed out: reload the page to sign in again');
    await page.reload();
    expect(new URL(page.url()).pathname).toBe('/signin');
  });
});
