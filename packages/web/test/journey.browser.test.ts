/**
 * Issue 29's journey in one go, in Chromium on SQLite and Postgres, with a real `trellis-agent`
 * process running the pinned OpenTofu: an admin of an organization signs in, creates a vineyard
 * and a configuration (inline files, a sensitive variable) from the web forms, queues a plan from
 * the web, which the agent claims and runs; reviews the plan's change tree on the job page;
 * deploys that plan from the web and sees the outputs and the new state version on the state page;
 * changes a variable, plans and deploys again; rolls back to the first deploy's version; and
 * force-unlocks a lock left held, which the organization's operator is refused. The sensitive
 * value is in no HTML either of them receives.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrellisClient } from '@trellis/client';
import { type AgentProcess, checkTestPostgres, requirePeer, startAgentProcess } from '@trellis/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  clickAndConfirm,
  clickAndFollow,
  findChromium,
  HtmlAnswers,
  postWithSession,
  screenshot,
} from './support/browser.js';
import { describeInChromiumOnEachDialect, startWebOnDialect, type WebOnDialect } from './support/dialectSuite.js';
import { signedInThroughIssuer } from './support/oidcIssuer.js';
import type { WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the web journey');
const tofu = requirePeer('tofu', 'the web journey (a real agent running OpenTofu)');
const postgres = await checkTestPostgres();

/** Per test: a real agent runs OpenTofu (init, plan or apply) on a machine busy with other suites. */
const JOURNEY_TEST_TIMEOUT_MS = 300_000;
/** How long a job may take to end, as the job page's badge shows it: a bound on a hang, not an expectation. */
const JOB_END_MS = 240_000;

const SECRET = 'journey-Secret-5d2e-never-in-html';
const MAIN_TF = `variable "release" {
  type = string
}

variable "db_password" {
  type      = string
  sensitive = true
}

resource "terraform_data" "release" {
  input = var.release
}

resource "terraform_data" "credentials" {
  input = var.db_password
}

output "release" {
  value = terraform_data.release.output
}

output "db_password" {
  value     = var.db_password
  sensitive = true
}
`;

/** Waits for the job page's badge to say the job ended (live, over the page's stream); its status. */
async function jobEnd(page: Page): Promise<string | null> {
  const ended = page.locator(['SUCCESS', 'FAILED', 'CANCELLED'].map((s) => `#job-status[data-status="${s}"]`).join());
  await ended.waitFor({ timeout: JOB_END_MS });
  return ended.getAttribute('data-status');
}

const jobIdOf = (page: Page) => new URL(page.url()).pathname.split('/').pop() as string;

describeInChromiumOnEachDialect(
  'the web journey with a real agent and OpenTofu',
  { chromiumPath, postgres, peersFound: Boolean(tofu), timeout: JOURNEY_TEST_TIMEOUT_MS },
  (dialect) => {
    let site: WebOnDialect<true>;
    let server: WebServer;
    let web: string;
    let admin: Page;
    let operator: Page;
    let adminClient: TrellisClient;
    let orgId: string;
    let agent: AgentProcess;
    let workDir: string;
    let vineId: string;
    /** The state version the first deploy wrote. */
    let firstVersion: string;
    /** Every HTML page and fragment either browser received (the secret must be in none). */
    const answers = new HtmlAnswers({ fragments: true });

    /** The agent's own log, to say why a job did not succeed. */
    const agentLog = () => `the agent's log:\n${agent.output().slice(-6000)}`;

    beforeAll(async () => {
      site = await startWebOnDialect(dialect, chromiumPath as string, { issuer: true });
      ({ server, localhostUrl: web } = site);
      admin = await signedInThroughIssuer(site.browser, site.issuer, web, 'adam');
      operator = await signedInThroughIssuer(site.browser, site.issuer, web, 'otto');
      answers.watch(admin);
      answers.watch(operator);
      ({ orgId } = await server.organization('platform', 'olga@example.com', [
        ['adam@example.com', 'admin'],
        ['otto@example.com', 'operator'],
      ]));
      adminClient = await server.userClient('adam@example.com');

      // The organization's agent: registered by its admin, a real `trellis-agent run` with tofu.
      const { worker_id, worker_token } = await adminClient.registerWorker({ name: 'journey', orgId });
      workDir = mkdtempSync(join(tmpdir(), 'trellis-web-journey-agent-'));
      agent = startAgentProcess(
        server.url,
        { workerId: worker_id, workerToken: worker_token },
        { workDir, engineBin: tofu as string },
      );
    }, 120_000);

    afterAll(async () => {
      await agent?.stop();
      if (workDir) rmSync(workDir, { recursive: true, force: true });
      await site?.close();
    });

    it('an admin signs in and creates a vineyard of the organization and a configuration with a sensitive variable', async () => {
      await admin.goto(`${web}/vineyards`);
      await clickAndFollow(admin, '[data-new-vineyard]');
      await admin.fill('#vineyard-name', 'journey');
      await admin.selectOption('#vineyard-org', orgId);
      const vineyard = await clickAndFollow(admin, '[data-create-vineyard] button[type=submit]');
      const vineyardId = vineyard.pathname.split('/')[2] as string;
      expect(await admin.locator('h1').textContent()).toBe('journey');
      expect((await adminClient.getVineyard(vineyardId)).owner_id).toBe(orgId);

      await clickAndFollow(admin, '[data-new-vine]');
      await admin.fill('#vine-name', 'app');
      await admin.fill('#file-0-name', 'main.tf');
      await admin.fill('#file-0-content', MAIN_TF);
      await admin.fill('#variable-0-name', 'release');
      await admin.fill('#variable-0-value', 'v1');
      await Promise.all([admin.waitForNavigation(), admin.click('[data-add-variable]')]);
      await admin.fill('#variable-1-name', 'db_password');
      await admin.check('#variable-1-sensitive');
      await admin.fill('#variable-1-value', SECRET);
      const created = await clickAndFollow(admin, '[data-create-vine-submit]');
      vineId = created.pathname.split('/')[2] as string;
      expect(created.pathname).toBe(`/configurations/${vineId}`);
      expect(await admin.locator('h1').textContent()).toBe('app');
      expect(await adminClient.getConfiguration(vineId)).toMatchObject({
        vineyard_id: vineyardId,
        source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
        variables: {
          release: { value: 'v1', sensitive: false },
          db_password: { value: '***', sensitive: true },
        },
      });
    });

    it('queues a plan from the web; the agent runs OpenTofu; the job page shows the change tree, never the secret', async () => {
      await admin.goto(`${web}/configurations/${vineId}`);
      await Promise.all([admin.waitForURL(/\/jobs\/[0-9a-f-]{36}$/), admin.click('button[data-create-job="PLAN"]')]);
      const planId = jobIdOf(admin);
      expect(await jobEnd(admin), agentLog()).toBe('SUCCESS');
      expect((await adminClient.getJob(planId)).claimed_by_worker_id).toBe(agent.workerId);

      // The page the person watched shows what the ended plan offers, without a reload.
      const changes = admin.locator('[data-plan-changes]');
      await changes.waitFor();
      expect(await admin.locator('[data-deploy-plan] button').isVisible()).toBe(true);
      expect((await changes.locator('[data-change-counts]').textContent())?.replace(/\s+/g, ' ').trim()).toBe(
        '+ 2 to create · ~ 0 to update · -/+ 0 to replace · - 0 to destroy',
      );
      expect(
        await changes
          .locator('[data-resource-change]')
          .evaluateAll((items) =>
            items.map((item) => [item.getAttribute('data-resource-change'), item.getAttribute('data-change-kind')]),
          ),
      ).toEqual([
        ['terraform_data.credentials', 'create'],
        ['terraform_data.release', 'create'],
      ]);
      const credentials = changes.locator('[data-resource-change="terraform_data.credentials"]');
      await credentials.locator('summary').click();
      expect(await credentials.locator('[data-attribute="input"] [data-sensitive]').textContent()).toBe('(sensitive)');
      expect(await credentials.locator('[data-attribute="id"] [data-unknown]').textContent()).toBe(
        '(known after apply)',
      );
      const release = changes.locator('[data-resource-change="terraform_data.release"]');
      await release.locator('summary').click();
      expect(await release.locator('[data-attribute="input"]').textContent()).toContain('v1');
      const password = changes.locator('[data-output-change="db_password"]');
      await password.locator('summary').click();
      expect(await password.locator('[data-sensitive]').textContent()).toBe('(sensitive)');
      // The engine's log on the page, streamed to its end: no secret there either.
      await admin.locator('[data-stream-state].ended').waitFor();
      // The last chunks are appended on the next frame after the stream's end.
      await admin.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
      expect(await admin.locator('#log').textContent()).toContain('Plan: 2 to add, 0 to change, 0 to destroy.');
      expect(await admin.content()).not.toContain(SECRET);
      await screenshot(admin, `journey-plan-${dialect}`);
    });

    it('deploys that plan from the web; the state page shows the outputs and the version the deploy wrote', async () => {
      const planId = jobIdOf(admin);
      await Promise.all([
        admin.waitForURL((url) => /\/jobs\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(planId)),
        admin.click('[data-deploy-plan] button'),
      ]);
      const deployId = jobIdOf(admin);
      expect(await adminClient.getJob(deployId)).toMatchObject({ job_type: 'DEPLOY', plan_job_id: planId });
      expect(await jobEnd(admin), agentLog()).toBe('SUCCESS');

      await admin.goto(`${web}/configurations/${vineId}`);
      await clickAndFollow(admin, '[data-state-page-link]');
      expect(await admin.locator('[data-current-writer] a').getAttribute('href')).toBe(`/jobs/${deployId}`);
      expect(
        await admin
          .locator('[data-state-resource]')
          .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-state-resource'))),
      ).toEqual(['terraform_data.credentials', 'terraform_data.release']);
      expect(await admin.locator('[data-state-output="release"] td').last().textContent()).toBe('v1');
      const password = admin.locator('[data-state-output="db_password"]');
      expect(await password.getAttribute('data-sensitive-output')).not.toBeNull();
      expect(await password.locator('td').last().textContent()).toBe('(sensitive)');
      firstVersion = (await admin.locator('[data-current-version]').getAttribute('data-current-version')) as string;
      const history = await adminClient.stateHistory(vineId);
      expect(history.versions[0]).toMatchObject({ id: Number(firstVersion), job_id: deployId });
      expect(await admin.locator(`[data-state-version="${firstVersion}"] [data-current]`).count()).toBe(1);
      await screenshot(admin, `journey-state-${dialect}`);
    });

    it('changes a variable, plans and deploys again: a new state version with the new output', async () => {
      await admin.goto(`${web}/configurations/${vineId}`);
      await clickAndFollow(admin, '[data-edit-vine]');
      // The sensitive value is write-only: its field is empty, and left empty it is kept.
      expect(await admin.inputValue('tr[data-variable="db_password"] input[name^="value:"]')).toBe('');
      await admin.fill('tr[data-variable="release"] input[name^="value:"]', 'v2');
      await clickAndFollow(admin, '[data-vine-save]');

      await Promise.all([admin.waitForURL(/\/jobs\/[0-9a-f-]{36}$/), admin.click('button[data-create-job="PLAN"]')]);
      const planId = jobIdOf(admin);
      expect(await jobEnd(admin), agentLog()).toBe('SUCCESS');
      await admin.locator('[data-plan-changes]').waitFor();
      const release = admin.locator('[data-resource-change="terraform_data.release"]');
      expect(await release.getAttribute('data-change-kind')).toBe('update');
      await release.locator('summary').click();
      expect((await release.locator('[data-attribute="input"]').textContent())?.replace(/\s+/g, ' ').trim()).toBe(
        '~ input "v1" → "v2"',
      );
      // The secret did not change: its resource is not in the plan.
      expect(await admin.locator('[data-resource-change="terraform_data.credentials"]').count()).toBe(0);

      await Promise.all([
        admin.waitForURL((url) => /\/jobs\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(planId)),
        admin.click('[data-deploy-plan] button'),
      ]);
      const deployId = jobIdOf(admin);
      expect(await jobEnd(admin), agentLog()).toBe('SUCCESS');

      await admin.goto(`${web}/configurations/${vineId}/state`);
      expect(await admin.locator('[data-current-writer] a').getAttribute('href')).toBe(`/jobs/${deployId}`);
      expect(await admin.locator('[data-current-version]').getAttribute('data-current-version')).not.toBe(firstVersion);
      expect(await admin.locator('[data-state-output="release"] td').last().textContent()).toBe('v2');
      expect(await admin.locator(`[data-state-version="${firstVersion}"]`).count()).toBe(1);
    });

    it("an admin rolls back to the first deploy's version: a new current version holding its outputs", async () => {
      const before = await adminClient.stateHistory(vineId);
      await admin.goto(`${web}/configurations/${vineId}/state`);
      await clickAndConfirm(admin, `[data-state-rollback-to="${firstVersion}"]`);
      expect(new URL(admin.url()).search).toBe('?done=rolled-back');

      const after = await adminClient.stateHistory(vineId);
      expect(after.versions).toHaveLength(before.versions.length + 1);
      expect(after.versions[0]?.serial).toBe((before.versions[0]?.serial ?? 0) + 1);
      expect(await admin.locator('[data-current-version]').getAttribute('data-current-version')).toBe(
        String(after.versions[0]?.id),
      );
      expect(await admin.locator('[data-current-writer]').textContent()).toBe('you');
      expect(await admin.locator('[data-state-output="release"] td').last().textContent()).toBe('v1');
      await screenshot(admin, `journey-rolled-back-${dialect}`);
    });

    it('a lock left held: the operator sees its holder and is refused force-unlock, the admin force-unlocks', async () => {
      // The organization's owner ran `tofu apply` through the cloud block, which died holding the lock.
      const locked = await fetch(`${server.url}/api/v2/workspaces/ws-${vineId}/actions/lock`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await server.userToken('olga@example.com')}`,
          'content-type': 'application/vnd.api+json',
        },
        body: JSON.stringify({ reason: 'tofu apply from a laptop' }),
      });
      expect(locked.status, await locked.clone().text()).toBe(200);

      await operator.goto(`${web}/configurations/${vineId}/state`);
      expect(await operator.locator('[data-state-lock]').getAttribute('data-state-lock')).toBe('held');
      expect(await operator.locator('[data-state-lock-holder]').textContent()).toBe('olga@example.com');
      expect(await operator.locator('[data-force-unlock-form]').count()).toBe(0);
      expect(await operator.locator('[data-rollback-form]').count()).toBe(0);
      // Posted anyway (their session, the page's origin, past the question): core refuses it.
      const refused = await postWithSession(
        operator,
        `${web}/configurations/${vineId}/state/unlock`,
        'confirmed=yes',
        web,
      );
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('this needs the role admin in the organization; yours is operator');
      expect((await adminClient.stateHistory(vineId)).lock).not.toBeNull();

      await admin.goto(`${web}/configurations/${vineId}/state`);
      expect(await admin.locator('[data-state-lock-holder]').textContent()).toBe('olga@example.com');
      await clickAndConfirm(admin, '[data-state-force-unlock]');
      expect(new URL(admin.url()).search).toBe('?done=unlocked');
      expect(await admin.locator('[data-state-lock]').getAttribute('data-state-lock')).toBe('free');
      expect((await adminClient.stateHistory(vineId)).lock).toBeNull();
      const audit = await adminClient.listAuditPage({ action: 'state.force_unlock', orgId });
      expect(audit.items.map((entry) => [entry.actor.email, entry.target.id])).toEqual([['adam@example.com', vineId]]);
    });

    it('no HTML either person received held the sensitive value', async () => {
      await operator.goto(`${web}/configurations/${vineId}`);
      expect(await answers.read()).toBeGreaterThan(15);
      expect(await answers.holding(SECRET)).toEqual([]);
    });
  },
);
