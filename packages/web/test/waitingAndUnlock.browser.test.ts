/**
 * Issue 25 in the web interface, in Chromium against a real control plane on SQLite and Postgres:
 * a queued job's page says why it waits (no agent online; its configuration busy with another
 * job, linked), and an admin force-unlocks a configuration's state with the button beside the
 * lock (audited).
 */
import type { TrellisClient } from '@trellis/client';
import type { VineView } from '@trellis/core';
import { checkTestPostgres } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, clickAndConfirm, findChromium, screenshot } from './support/browser.js';
import { describeInChromiumOnEachDialect, startWebOnDialect, type WebOnDialect } from './support/dialectSuite.js';
import { type AgentClient, vineyardWithVine, type WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the waiting and unlock suite');
const postgres = await checkTestPostgres();

describeInChromiumOnEachDialect(
  'why a job waits and force-unlock in the web pages',
  { chromiumPath, postgres, timeout: BROWSER_TEST_TIMEOUT_MS },
  (dialect) => {
    let site: WebOnDialect;
    let server: WebServer;
    let user: TrellisClient;
    let agent: AgentClient;
    let vine: VineView;
    /** The running job's state token, as its engine would use it. */
    let stateToken: string;
    let firstId: string;
    let secondId: string;

    const signedInPage = () => site.signedInPage();

    beforeAll(async () => {
      site = await startWebOnDialect(dialect, chromiumPath as string);
      ({ server } = site);
      user = await server.userClient();
      vine = (await vineyardWithVine(user, 'waiting')).vine;
    }, 60_000);

    afterAll(async () => {
      await site?.close();
    });

    it('a queued job says why it waits: no agent online, then its configuration busy with another job', async () => {
      const first = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      const page = await signedInPage();
      await page.goto(`${server.url}/jobs/${first.id}`);
      const waiting = page.locator('[data-waiting-for]');
      expect(await waiting.getAttribute('data-waiting-for')).toBe('no_agent_online');
      expect(await waiting.textContent()).toContain('none of your agents is online');
      await screenshot(page, 'job-waiting-no-agent');

      agent = await server.agentClient(user, 'waiting-agent');
      await agent.heartbeat('1.0.0', []);
      await page.reload();
      expect(await page.locator('[data-waiting-for]').count()).toBe(0);

      const claimed = await agent.claimJob();
      expect(claimed?.job.id).toBe(first.id);
      stateToken = claimed?.state_token as string;
      const second = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      firstId = first.id;
      secondId = second.id;
      await page.goto(`${server.url}/jobs/${second.id}`);
      expect(await waiting.getAttribute('data-waiting-for')).toBe('vine_busy');
      expect(await waiting.textContent()).toContain(`busy with job ${first.id}`);
      expect(await waiting.locator('a').getAttribute('href')).toBe(`/jobs/${first.id}`);
      await screenshot(page, 'job-waiting-vine-busy');
    });

    it("an admin force-unlocks the configuration's state from its page", async () => {
      // The engine's lock, as the http backend takes it with the running job's state token.
      const locked = await fetch(`${server.url}/api/state/${vine.id}`, {
        method: 'LOCK',
        headers: {
          authorization: `Basic ${Buffer.from(`${agent.workerId}:${stateToken}`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ ID: 'dead-engine-lock', Operation: 'OperationTypeApply', Who: 'tofu@dead-host' }),
      });
      expect(locked.status).toBe(200);

      const page = await signedInPage();
      await page.goto(`${server.url}/configurations/${vine.id}`);
      expect(await page.locator('[data-state-lock]').textContent()).toContain('tofu@dead-host');
      await clickAndConfirm(page, '[data-state-unlock]');
      expect(new URL(page.url()).search).toBe('?done=unlocked');
      await page.goto(`${server.url}/configurations/${vine.id}`);
      expect(await page.locator('[data-state-lock]').textContent()).toBe('free');
      expect(await page.locator('[data-state-unlock]').count()).toBe(0);
      await screenshot(page, 'state-force-unlocked');

      const audit = await user.listAuditPage({ action: 'state.force_unlock' });
      expect(audit.items.map((entry) => [entry.target.id, entry.details.held_by, entry.details.via])).toEqual([
        [vine.id, 'tofu@dead-host', 'trellis'],
      ]);
    });

    it('the note goes once the job starts, live', async () => {
      const page = await signedInPage();
      await page.goto(`${server.url}/jobs/${secondId}`);
      const note = page.locator('[data-waiting-for]');
      expect(await note.isVisible()).toBe(true);
      await agent.reportStatus(firstId, { status: 'SUCCESS' });
      expect((await agent.claimJob())?.job.id).toBe(secondId);
      await page.waitForSelector('#job-status[data-status="PROCESSING"]');
      await note.waitFor({ state: 'hidden' });
      expect(await note.isVisible()).toBe(false);
    });
  },
);
