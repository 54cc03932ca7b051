/**
 * Live job lists (issue 29), in Chromium against a real control plane on SQLite and Postgres: the
 * jobs list and a vine's last jobs follow `GET /live/jobs` with htmx's SSE extension, so a job
 * queued through the API comes in at the top and its row changes as an agent claims and finishes
 * it, without a reload; the queue page and the fleet follow `GET /live/queue` and `/live/fleet`. At the HTTP level: the stream never carries a job of an organization the
 * viewer is not in, and asks a signed-out request to sign in.
 */
import { TrellisClient } from '@trellis/client';
import type { VineView } from '@trellis/core';
import { checkTestPostgres } from '@trellis/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { seriousViolations } from './support/axe.js';
import { BROWSER_TEST_TIMEOUT_MS, findChromium } from './support/browser.js';
import { describeInChromiumOnEachDialect, startWebOnDialect, type WebOnDialect } from './support/dialectSuite.js';
import { type AgentClient, BOOTSTRAP_TOKEN, MAIN_TF, vineyardWithVine, type WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the live job lists suite');
const postgres = await checkTestPostgres();

describeInChromiumOnEachDialect(
  'live job lists',
  { chromiumPath, postgres, timeout: BROWSER_TEST_TIMEOUT_MS },
  (dialect) => {
    let site: WebOnDialect;
    let server: WebServer;
    let user: TrellisClient;
    let agent: AgentClient;
    let vine: VineView;
    let vineyardId: string;
    /** Script errors of each page opened (htmx logs a failed swap or stream as one). */
    const errors = new Map<Page, string[]>();

    /**
     * A signed-in page at `path`, once its list's stream answered (so it is following).
     * `forAxe`: its context bypasses the CSP, so axe-core can go in as an inline script.
     */
    async function followedPage(path: string, forAxe = false): Promise<Page> {
      let page: Page;
      if (forAxe) {
        const context = await site.newContext({ bypassCSP: true });
        page = await context.newPage();
      } else {
        const opened = await site.context();
        errors.set(opened.page, opened.errors);
        page = opened.page;
      }
      await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
      const stream = page.waitForResponse((response) => new URL(response.url()).pathname.startsWith('/live/'));
      await page.goto(`${server.url}${path}`);
      expect((await stream).status()).toBe(200);
      // Set on this document: still there at the end means the page was never reloaded.
      await page.evaluate(() => document.documentElement.setAttribute('data-test-loaded', 'once'));
      return page;
    }

    const statusOf = (page: Page, jobId: string) =>
      page.locator(`tr[data-job-row="${jobId}"] [data-status]`).getAttribute('data-status');

    /** Waits until the job's row shows `status`. */
    async function rowShows(page: Page, jobId: string, status: string): Promise<void> {
      await page.locator(`tr[data-job-row="${jobId}"] [data-status="${status}"]`).waitFor();
    }

    /** The job ids of the list's rows, top to bottom. */
    const rowIds = (page: Page) =>
      page
        .locator('[data-job-list] tbody tr')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-job-row')));

    beforeAll(async () => {
      site = await startWebOnDialect(dialect, chromiumPath as string);
      ({ server } = site);
      user = await server.userClient();
      const created = await vineyardWithVine(user, 'live-rows');
      vine = created.vine;
      vineyardId = created.vineyard.id;
      agent = await server.agentClient(user, 'live-agent');
      await agent.heartbeat('1.0.0', []);
      // An older job, so the list has a row before the new one comes in.
      const older = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      expect((await agent.claimJob())?.job.id).toBe(older.id);
      await agent.reportStatus(older.id, { status: 'SUCCESS' });
    }, 60_000);

    afterAll(async () => {
      await site?.close();
    });

    it('shows a job queued through the API at the top of the jobs list, then its status as an agent runs it', async () => {
      const page = await followedPage('/jobs');
      const before = await rowIds(page);
      expect(before.length).toBe(1);

      const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      await rowShows(page, job.id, 'QUEUED');
      expect(await rowIds(page)).toEqual([job.id, ...before]);
      // The same row as the page renders: the vine's name and the job's link.
      const row = page.locator(`tr[data-job-row="${job.id}"]`);
      expect(await row.locator('td').nth(1).textContent()).toBe('live-rows');
      expect(await row.locator('a').getAttribute('href')).toBe(`/jobs/${job.id}`);

      expect((await agent.claimJob())?.job.id).toBe(job.id);
      await rowShows(page, job.id, 'PROCESSING');
      await agent.reportStatus(job.id, { status: 'FAILED', error_message: 'no provider' });
      await rowShows(page, job.id, 'FAILED');
      // Replaced in place: one row per job, in the same order.
      expect(await rowIds(page)).toEqual([job.id, ...before]);
      expect(await statusOf(page, before[0] as string)).toBe('SUCCESS');
      expect(await page.locator('html').getAttribute('data-test-loaded')).toBe('once');
      expect(errors.get(page)).toEqual([]);
    });

    it('keeps a filtered list to its filter: a job of another vine or status never comes in, one leaves when it no longer matches', async () => {
      const other = await user.createConfiguration({
        name: 'live-other',
        vineyard_id: vineyardId,
        source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
      });
      const page = await followedPage(`/jobs?vine_id=${other.id}&status=QUEUED`);
      expect(await page.locator('[data-no-jobs]').count()).toBe(1);

      const elsewhere = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      const job = await user.createJob({ job_type: 'PLAN', configuration_id: other.id });
      // The empty list becomes a table of the one job that matches.
      await rowShows(page, job.id, 'QUEUED');
      expect(await rowIds(page)).toEqual([job.id]);

      // Claimed: no longer QUEUED, so it leaves this list.
      const claimed = [(await agent.claimJob())?.job.id, (await agent.claimJob())?.job.id];
      expect(claimed.sort()).toEqual([elsewhere.id, job.id].sort());
      await page.locator(`tr[data-job-row="${job.id}"]`).waitFor({ state: 'detached' });
      expect(await rowIds(page)).toEqual([]);
      await agent.reportStatus(job.id, { status: 'SUCCESS' });
      await agent.reportStatus(elsewhere.id, { status: 'SUCCESS' });
      expect(await page.locator('html').getAttribute('data-test-loaded')).toBe('once');
      expect(errors.get(page)).toEqual([]);
    });

    it('keeps the jobs list free of serious accessibility violations as rows come in', async () => {
      const page = await followedPage('/jobs', true);
      const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      await rowShows(page, job.id, 'QUEUED');
      expect(await seriousViolations(page)).toEqual([]);
      expect((await agent.claimJob())?.job.id).toBe(job.id);
      await agent.reportStatus(job.id, { status: 'SUCCESS' });
      await rowShows(page, job.id, 'SUCCESS');
      expect(await seriousViolations(page)).toEqual([]);
    });

    it("updates a vine's last jobs: a new one at the top with its commit column, its status as it runs", async () => {
      const fresh = await user.createConfiguration({
        name: 'live-fresh',
        vineyard_id: vineyardId,
        source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
      });
      const page = await followedPage(`/configurations/${fresh.id}`);
      expect(await page.locator('[data-job-list="vine"] [data-no-jobs]').count()).toBe(1);

      const first = await user.createJob({ job_type: 'PLAN', configuration_id: fresh.id });
      await rowShows(page, first.id, 'QUEUED');
      expect((await agent.claimJob())?.job.id).toBe(first.id);
      await rowShows(page, first.id, 'PROCESSING');
      await agent.reportStatus(first.id, { status: 'SUCCESS' });
      await rowShows(page, first.id, 'SUCCESS');

      const second = await user.createJob({ job_type: 'PLAN', configuration_id: fresh.id });
      await rowShows(page, second.id, 'QUEUED');
      expect(await rowIds(page)).toEqual([second.id, first.id]);
      // The vine's list has the commit column the page renders, not the vine's name.
      expect(await page.locator('[data-job-list="vine"] thead th').allTextContents()).toEqual([
        'Job',
        'Commit',
        'Status',
        'Created',
        'Duration',
      ]);
      expect((await agent.claimJob())?.job.id).toBe(second.id);
      await agent.reportStatus(second.id, { status: 'CANCELLED' });
      await rowShows(page, second.id, 'CANCELLED');
      expect(await page.locator('html').getAttribute('data-test-loaded')).toBe('once');
    });

    it('never sends a job of an organization the viewer is not in; a signed-out stream is refused', async () => {
      const signedOut = await fetch(`${server.url}/live/jobs?view=jobs`);
      expect(signedOut.status).toBe(401);
      await signedOut.body?.cancel();

      const cookie = await server.sessionCookie();
      const controller = new AbortController();
      const response = await fetch(`${server.url}/live/jobs?view=jobs`, {
        headers: { cookie, accept: 'text/event-stream' },
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = '';
      /** Reads the stream until `wanted` is in it; returns everything read. */
      const readUntil = async (wanted: string): Promise<string> => {
        while (!text.includes(wanted)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the stream ended before ${wanted}`);
          text += decoder.decode(value, { stream: true });
        }
        return text;
      };
      await readUntil('event: rows');

      // Another person's organization, its vine and agent: its job is queued, claimed and ends.
      const rival = await server.userClient('rival@example.com');
      const org = await rival.createOrg('rival-team');
      const rivalVineyard = await rival.createVineyard('rival-yard', { orgId: org.id });
      const rivalVine = await rival.createConfiguration({
        name: 'rival-vine',
        vineyard_id: rivalVineyard.id,
        source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
      });
      const { worker_id, worker_token } = await rival.registerWorker({ name: 'rival-agent', orgId: org.id });
      const rivalAgent = new TrellisClient({
        baseUrl: server.url,
        auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
      });
      await rivalAgent.heartbeat('1.0.0', []);
      const secret = await rival.createJob({ job_type: 'PLAN', configuration_id: rivalVine.id });
      expect((await rivalAgent.claimJob())?.job.id).toBe(secret.id);
      await rivalAgent.reportStatus(secret.id, { status: 'SUCCESS' });

      // The viewer's own job, after the rival's: once its row is in, the rival's events are past.
      const own = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      const seen = await readUntil(`data-job-row="${own.id}"`);
      expect(seen).toContain('event: row\n');
      expect(seen).not.toContain(secret.id);
      expect(seen).not.toContain('rival-vine');
      controller.abort();
      expect((await agent.claimJob())?.job.id).toBe(own.id);
      await agent.reportStatus(own.id, { status: 'SUCCESS' });
    });

    it('keeps the queue page current: jobs come in with their positions, a claimed one leaves and the next moves up', async () => {
      const page = await followedPage('/queue');
      await page.locator('[data-queue-empty]').waitFor();
      const first = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      const second = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      const position = (jobId: string, value: string) =>
        page.locator(`tr[data-queue-job="${jobId}"] td[data-position]`, { hasText: new RegExp(`^${value}$`) });
      await position(second.id, '2').waitFor();
      await position(first.id, '1').waitFor();
      expect(await page.locator('[data-queue-total]').textContent()).toContain('2 jobs are queued');

      expect((await agent.claimJob())?.job.id).toBe(first.id);
      await page.locator(`tr[data-queue-job="${first.id}"]`).waitFor({ state: 'detached' });
      await position(second.id, '1').waitFor();
      await agent.reportStatus(first.id, { status: 'SUCCESS' });
      expect((await agent.claimJob())?.job.id).toBe(second.id);
      await page.locator('[data-queue-empty]').waitFor();
      await agent.reportStatus(second.id, { status: 'SUCCESS' });
      expect(await page.locator('html').getAttribute('data-test-loaded')).toBe('once');
      expect(errors.get(page)).toEqual([]);
    });

    it("keeps the fleet current: a vine's status and the counts move as its job runs", async () => {
      const fleetVine = await user.createConfiguration({
        name: 'live-fleet',
        vineyard_id: vineyardId,
        source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
      });
      const page = await followedPage('/fleet');
      const row = page.locator('tr[data-fleet-vine="live-fleet"]');
      const count = (status: string) =>
        page.locator(`[data-count="status:${status}"] .fleet-count`).textContent().then(Number);
      await row.locator('[data-status="NEW"]').waitFor();
      const planned = await count('PLANNED');

      const job = await user.createJob({ job_type: 'PLAN', configuration_id: fleetVine.id });
      expect((await agent.claimJob())?.job.id).toBe(job.id);
      await row.locator('[data-status="PLANNING"]').waitFor();
      await agent.reportStatus(job.id, { status: 'SUCCESS' });
      await row.locator('[data-status="PLANNED"]').waitFor();
      await page
        .locator(`[data-count="status:PLANNED"] .fleet-count`, { hasText: new RegExp(`^${planned + 1}$`) })
        .waitFor();
      expect(await count('NEW')).toBeGreaterThanOrEqual(0);
      expect(await page.locator('#fleet-counts').count()).toBe(1);
      expect(await page.locator('html').getAttribute('data-test-loaded')).toBe('once');
      expect(errors.get(page)).toEqual([]);
    });

    it('reconnects after the control plane restarts and brings the list up to date', async () => {
      const page = await followedPage('/jobs');
      const before = await rowIds(page);
      await server.stop();
      await server.start();
      // Queued once the server is back, whether the page has reconnected yet or not: either the
      // list it gets on reconnecting or the row sent live brings the job in.
      const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      await rowShows(page, job.id, 'QUEUED');
      expect(await rowIds(page)).toEqual([job.id, ...before]);
      expect((await agent.claimJob())?.job.id).toBe(job.id);
      await rowShows(page, job.id, 'PROCESSING');
      await agent.reportStatus(job.id, { status: 'SUCCESS' });
      await rowShows(page, job.id, 'SUCCESS');
      expect(await page.locator('html').getAttribute('data-test-loaded')).toBe('once');
    });
  },
);
