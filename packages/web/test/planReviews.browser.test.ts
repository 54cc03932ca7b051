/**
 * Approvals and overrides in the web interface, in Chromium (issue 15): an organization's owner
 * (the bootstrap admin), an operator and a viewer signed in through a real OpenID Connect issuer.
 * The owner sets the vine's approval setting with its form; each person sees on a plan's job page
 * only the forms their role may use (viewer: none; operator: approve and reject; owner: override
 * too); a refused approval (separate approver) says why; the decisions show on the page.
 */
import type { TrellisClient } from '@trellis/client';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { type Issuer, issuerEnv, signedInThroughIssuer, startIssuer } from './support/oidcIssuer.js';
import { runJob } from './support/seed.js';
import { ADMIN_EMAIL, type AgentClient, BOOTSTRAP_TOKEN, MAIN_TF, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the plan reviews suite');

const FAILED_MANDATORY = {
  policy_id: '00000000-0000-4000-8000-00000000a001',
  version: 1,
  name: 'no-public-buckets',
  enforcement: 'mandatory',
  passed: false,
  messages: ['aws_s3_bucket.logs must not be public'],
};

describe.skipIf(!chromiumPath)(
  'plan reviews in the web interface, in Chromium',
  { timeout: BROWSER_TEST_TIMEOUT_MS },
  () => {
    let issuer: Issuer;
    let server: WebServer;
    let browser: TestBrowser;
    let web: string;
    const contexts: BrowserContext[] = [];
    let owner: Page;
    let operator: Page;
    let viewer: Page;
    let ownerClient: TrellisClient;
    let operatorClient: TrellisClient;
    let agent: AgentClient;
    let vineId: string;

    /** A person in their own browser, signed in through the issuer as `<login>@example.com`. */
    const signedIn = (login: string) => signedInThroughIssuer(browser, issuer, web, login);

    /** A successful plan of the vine queued by `by`, run by the organization's agent. */
    const plan = (by: TrellisClient, metadata: Record<string, unknown> = {}) =>
      runJob(
        by,
        agent,
        { job_type: 'PLAN', configuration_id: vineId },
        {
          artifact: true,
          status: 'SUCCESS',
          execution_metadata: {
            plan_summary: { add: 1, change: 0, destroy: 0 },
            ...(metadata as Record<string, never>),
          },
        },
      );

    beforeAll(async () => {
      issuer = await startIssuer();
      server = await new WebServer({ env: issuerEnv(issuer) }).start();
      web = `http://localhost:${server.port}`;
      issuer.register(`${web}/api/auth/callback`);
      browser = await TestBrowser.launch(chromiumPath as string);
      operator = await signedIn('otto');
      viewer = await signedIn('vera');
      const ownerContext = await browser.context();
      contexts.push(ownerContext.context);
      owner = ownerContext.page;
      await owner.goto(`${web}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);

      const { orgId, owner: adminActor } = await server.organization('platform', ADMIN_EMAIL, [
        ['otto@example.com', 'operator'],
        ['vera@example.com', 'viewer'],
      ]);
      const { useCases } = server;
      const vineyard = await useCases.vineyards.create(adminActor, { name: 'prod', org_id: orgId });
      vineId = (
        await useCases.vines.create(adminActor, {
          name: 'edge',
          vineyard_id: vineyard.id,
          source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
        })
      ).id;
      ownerClient = await server.userClient(ADMIN_EMAIL);
      operatorClient = await server.userClient('otto@example.com');
      agent = await server.agentClient(ownerClient, 'pool', orgId);
    });
    afterAll(async () => {
      for (const context of contexts) await context.close();
      await browser?.close();
      await server?.close();
      await new Promise((resolve) => issuer?.server.close(resolve));
    });

    it('the owner sets the approval setting on the vine page; others only read it', async () => {
      await viewer.goto(`${web}/configurations/${vineId}`);
      expect(await viewer.locator('[data-approval-setting]').getAttribute('data-approval-setting')).toBe('off');
      expect(await viewer.locator('form[data-approval-settings]').count()).toBe(0);
      await operator.goto(`${web}/configurations/${vineId}`);
      expect(await operator.locator('form[data-approval-settings]').count()).toBe(0);

      await owner.goto(`${web}/configurations/${vineId}`);
      await owner.check('form[data-approval-settings] input[name="required"]');
      await owner.check('form[data-approval-settings] input[name="separate_approver"]');
      await Promise.all([owner.waitForEvent('load'), owner.click('[data-approval-save]')]);
      expect(await owner.locator('[data-approval-setting]').getAttribute('data-approval-setting')).toBe('separate');
      // Deploying without an approved plan is refused, so the page no longer offers it.
      expect(await owner.locator('[data-plan-and-deploy]').count()).toBe(0);
      // Nor a destroy without an approved destroy plan (issue 23): it offers to plan one instead.
      expect(await owner.locator('[data-vine-actions] [data-create-job="DESTROY"]').count()).toBe(0);
      expect(await owner.locator('[data-destroy-plan]').count()).toBe(1);
      await Promise.all([owner.waitForURL(/\/jobs\/[0-9a-f-]{36}$/), owner.click('[data-destroy-plan]')]);
      const destroyPlanId = new URL(owner.url()).pathname.split('/').pop() as string;
      // The job page follows the same rule: no destroy without a plan, only "Plan destroy".
      expect(await owner.locator('[data-create-job="DESTROY"]:not([data-plan-job-id])').count()).toBe(0);
      expect(await owner.locator('[data-destroy-plan]').count()).toBe(1);
      const destroyPlan = await ownerClient.getJob(destroyPlanId);
      expect(destroyPlan).toMatchObject({ job_type: 'PLAN', config_snapshot: { destroy: true } });
      await ownerClient.cancelJob(destroyPlanId);
      expect((await ownerClient.getConfiguration(vineId)).approval).toEqual({
        required: true,
        separate_approver: true,
      });
      await screenshot(owner, 'plan-reviews-vine-setting');
    });

    it('shows each role only its forms; the planner is refused as approver; the owner overrides and approves', async () => {
      const job = await plan(operatorClient, { policy_results: [FAILED_MANDATORY] });
      const url = `${web}/jobs/${job.id}`;

      await viewer.goto(url);
      expect(await viewer.locator('[data-approval-state]').getAttribute('data-approval-state')).toBe('required');
      expect(await viewer.locator('[data-override-state]').getAttribute('data-override-state')).toBe('needed');
      expect(await viewer.locator('form[data-plan-review-form]').count()).toBe(0);

      await operator.goto(url);
      // The planner is never offered what the API refuses (issue 23): the page says why instead.
      expect(await operator.locator('form[data-plan-review-form="approve"]').count()).toBe(0);
      expect(await operator.locator('[data-approve-refused]').getAttribute('data-approve-refused')).toBe(
        'separate_approver_required',
      );
      expect(await operator.locator('form[data-plan-review-form="reject"]').count()).toBe(1);
      expect(await operator.locator('form[data-plan-review-form="override"]').count()).toBe(0);
      // Nor a deploy the gate refuses: the page says why.
      expect(await operator.locator('[data-deploy-plan]').count()).toBe(0);
      expect(await operator.locator('[data-deploy-refused]').getAttribute('data-deploy-refused')).toBe('policy_failed');
      await expect(operatorClient.approvePlan(job.id)).rejects.toMatchObject({ code: 'separate_approver_required' });
      await screenshot(operator, 'plan-reviews-separate-approver');

      await owner.goto(url);
      expect(await owner.locator('form[data-plan-review-form]').count()).toBe(3);
      await owner.fill('form[data-plan-review-form="override"] input[name="reason"]', 'public by design');
      await Promise.all([owner.waitForEvent('load'), owner.click('[data-override-plan]')]);
      expect(await owner.locator('[data-override-state]').getAttribute('data-override-state')).toBe('overridden');
      expect(await owner.locator('[data-override-state]').textContent()).toContain(`overridden by ${ADMIN_EMAIL}`);
      await owner.fill('form[data-plan-review-form="approve"] input[name="comment"]', 'reviewed the diff');
      await Promise.all([owner.waitForEvent('load'), owner.click('[data-approve-plan]')]);
      expect(await owner.locator('[data-approval-state]').getAttribute('data-approval-state')).toBe('approved');
      expect(await owner.locator('[data-approval-state]').textContent()).toMatch(
        new RegExp(`^approved by ${ADMIN_EMAIL} at .+ UTC: reviewed the diff$`),
      );
      expect(await owner.locator('form[data-plan-review-form]').count()).toBe(0);
      expect(await owner.locator('[data-deploy-plan]').isVisible()).toBe(true);
      expect((await ownerClient.getJob(job.id)).approval).toMatchObject({ decision: 'approved' });
      await screenshot(owner, 'plan-reviews-approved');
    });

    it('a plan watched while it runs: once it ends, the page offers its review, never a deploy the gate refuses', async () => {
      const job = await ownerClient.createJob({ job_type: 'PLAN', configuration_id: vineId });
      await owner.goto(`${web}/jobs/${job.id}`);
      expect(await owner.locator('#job-status').getAttribute('data-status')).toBe('QUEUED');
      expect(await owner.locator('form[data-plan-review-form]').count()).toBe(0);
      expect((await agent.claimJob())?.job.id).toBe(job.id);
      const bytes = new TextEncoder().encode(`plan of ${job.id}`);
      await agent.uploadPlanArtifact(job.id, bytes, bytes.length);
      await agent.reportStatus(job.id, {
        status: 'SUCCESS',
        execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 } },
      });

      // The same page, live: the forms the owner may use now, and why it is not deployable yet.
      await owner.locator('form[data-plan-review-form="reject"]').waitFor();
      expect(await owner.locator('[data-approve-refused]').getAttribute('data-approve-refused')).toBe(
        'separate_approver_required',
      );
      expect(await owner.locator('[data-deploy-plan]').count()).toBe(0);
      expect(await owner.locator('[data-deploy-refused]').getAttribute('data-deploy-refused')).toBe(
        'approval_required',
      );
    });

    it('an operator rejects a plan with a reason; the page shows the rejection', async () => {
      const job = await plan(ownerClient);
      await operator.goto(`${web}/jobs/${job.id}`);
      await operator.fill('form[data-plan-review-form="reject"] input[name="comment"]', 'wrong region');
      await Promise.all([operator.waitForEvent('load'), operator.click('[data-reject-plan]')]);
      expect(await operator.locator('[data-approval-state]').getAttribute('data-approval-state')).toBe('rejected');
      expect(await operator.locator('[data-approval-state]').textContent()).toContain('rejected by otto@example.com');
      expect(await operator.locator('form[data-plan-review-form]').count()).toBe(0);
      expect((await ownerClient.getJob(job.id)).approval).toMatchObject({
        decision: 'rejected',
        comment: 'wrong region',
      });
    });
  },
);
