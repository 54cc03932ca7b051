/**
 * The job page's live log in Chromium when the server refuses its stream for too many open ones
 * (`429 too_many_streams`, issue 10): the page says it is retrying, and follows the job once a
 * stream is free, showing every chunk once.
 */
import type { ControlPlane } from '@trellis/server';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, findChromium, TestBrowser } from './support/browser.js';
import { BOOTSTRAP_TOKEN, vineyardWithVine, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the live log limits suite');

describe.skipIf(!chromiumPath)(
  'live job log in Chromium at the cap on open streams',
  {
    timeout: BROWSER_TEST_TIMEOUT_MS,
  },
  () => {
    let server: WebServer;
    let browser: TestBrowser;
    let context: BrowserContext;
    let page: Page;
    let errors: string[];

    /** Polls the server's own stream counters until `ready` holds. */
    async function until(ready: (stats: ReturnType<ControlPlane['logStreams']['stats']>) => boolean): Promise<void> {
      for (let attempt = 0; attempt < 1500; attempt++) {
        if (ready((server.controlPlane as ControlPlane).logStreams.stats())) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error('the stream counters never got there');
    }

    beforeAll(async () => {
      server = await new WebServer({ env: { TRELLIS_STREAMS_PER_JOB: '1' } }).start();
      browser = await TestBrowser.launch(chromiumPath as string);
      ({ context, page, errors } = await browser.context());
    });
    afterAll(async () => {
      await context?.close();
      await browser?.close();
      await server?.close();
    });

    it('retries a refused stream and follows once one is free', async () => {
      const user = await server.userClient();
      const agent = await server.agentClient(user, 'runner');
      const { vine } = await vineyardWithVine(user, 'capped');
      const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      expect((await agent.claimJob())?.job.id).toBe(job.id);

      // Another follower (the CLI, say) holds the only stream the job may have.
      const held = new AbortController();
      const other = user.streamJobLogs(job.id, { signal: held.signal });
      const otherDone = other.next().catch(() => null);
      await until((stats) => stats.live === 1);

      await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}&next=/jobs/${job.id}`);
      await until((stats) => stats.refused >= 1);
      await page.waitForSelector('[data-stream-state].retrying');

      held.abort();
      await otherDone;
      await page.waitForSelector('[data-stream-state].live', { timeout: 30_000 });
      for (let i = 0; i < 3; i++) await agent.appendLog(job.id, `line ${i}\n`, 'STDOUT');
      await agent.reportStatus(job.id, { status: 'SUCCESS' });
      await page.waitForSelector('[data-stream-state].ended');
      const shown = await page.$$eval('#log .chunk', (spans) => spans.map((span) => span.textContent));
      expect(shown).toEqual(['line 0\n', 'line 1\n', 'line 2\n']);
      // The refused stream is an HTTP error the console reports; nothing else went wrong.
      expect(errors.filter((error) => !/429|Too Many Requests/.test(error))).toEqual([]);
    });
  },
);
