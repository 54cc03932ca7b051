/**
 * The job page of a git-driven job (issue 13), in Chromium against a real control plane with
 * GitHub's API answered by nock: a pull request's plan shows the resources it changes and, in its
 * Git provider card, that its status and comment reached GitHub; a plan whose status GitHub
 * refused says it is being retried and why.
 */
import {
  type Clock,
  type CoreSettings,
  coreServices,
  type Random,
  type SecretBox,
  sealProviderTokens,
  systemScope,
  type UnitOfWork,
} from '@trellis/core';
import { pullRequestTrigger, queueGitJob, tarGz } from '@trellis/testkit';
import nock from 'nock';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { type AgentClient, ADMIN_EMAIL, BOOTSTRAP_TOKEN, vineyardWithVine, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the git feedback suite');
const TOKEN = 'gho_admin_token_for_feedback_tests';

describe.skipIf(!chromiumPath)(
  'the git provider feedback on the job page',
  { timeout: BROWSER_TEST_TIMEOUT_MS },
  () => {
    let server: WebServer;
    let browser: TestBrowser;
    let agent: AgentClient;
    let uow: UnitOfWork;
    let deps: { clock: Clock; random: Random; settings: CoreSettings };
    let adminId: string;
    let vineId: string;
    const contexts: BrowserContext[] = [];

    async function signedInPage(): Promise<Page> {
      const { context, page } = await browser.context();
      contexts.push(context);
      await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
      return page;
    }

    beforeAll(async () => {
      nock.disableNetConnect();
      nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);
      server = await new WebServer({
        env: {
          TRELLIS_GITHUB_CLIENT_ID: 'github-client',
          TRELLIS_GITHUB_CLIENT_SECRET: 'github-secret',
          TRELLIS_OUTBOX_INTERVAL_S: '3600',
        },
      }).start();
      browser = await TestBrowser.launch(chromiumPath as string);
      const user = await server.userClient();
      const container = server.controlPlane?.container;
      if (!container) throw new Error('the server is not running');
      adminId = (await server.useCases.auth.ensureUser({ email: ADMIN_EMAIL })).id;
      uow = container.resolve<UnitOfWork>(coreServices.unitOfWork.id);
      deps = {
        clock: container.resolve<Clock>(coreServices.clock.id),
        random: container.resolve<Random>(coreServices.random.id),
        settings: container.resolve<CoreSettings>(coreServices.settings.id),
      };
      const sealed = await sealProviderTokens(
        container.resolve<SecretBox>(coreServices.secretBox.id),
        { provider: 'github', provider_user_id: '1' },
        { accessToken: TOKEN, refreshToken: null, expiresAt: null },
      );
      await uow.run(systemScope, (stores) =>
        stores.identities.upsert({
          user_id: adminId,
          provider: 'github',
          provider_user_id: '1',
          provider_token: sealed,
          scopes: 'repo',
        }),
      );
      const { vine } = await vineyardWithVine(user, 'feedback');
      vineId = vine.id;
      await user.connectRepository(vine.id, {
        provider: 'github',
        repository: 'acme/infra',
        branch: 'main',
        webhook: 'manual',
      });
      agent = await server.agentClient(user);
      await agent.heartbeat('1.0.0');
    });

    afterAll(async () => {
      for (const context of contexts) await context.close();
      await browser?.close();
      await server?.close();
      nock.cleanAll();
      nock.enableNetConnect();
    });

    it('shows the changes, and the status and comment delivered', async () => {
      const head = '1'.repeat(40);
      const job = await queueGitJob(uow, deps, { ownerId: adminId, vineId, trigger: pullRequestTrigger(head) });
      // The control plane fetches the commit's tarball (a configuration version, issue 23) to answer the claim.
      nock('https://api.github.com')
        .get(/\/tarball\//)
        .reply(200, tarGz([{ path: 'acme-infra-1111111/main.tf', content: 'terraform {}\n' }]));
      expect((await agent.claimJob())?.job.id).toBe(job.id);
      await agent.reportStatus(job.id, { status: 'PROCESSING' });
      await agent.reportStatus(job.id, {
        status: 'SUCCESS',
        execution_metadata: {
          plan_summary: { add: 1, change: 0, destroy: 0 },
          resource_changes: [{ address: 'aws_subnet.b', actions: ['create'] }],
          resource_changes_omitted: 0,
        },
      });
      const github = nock('https://api.github.com')
        .post(`/repos/acme/infra/statuses/${head}`)
        .reply(201, {})
        .post('/repos/acme/infra/issues/7/comments')
        .reply(201, { id: 9 });
      await server.useCases.vcsFeedback.deliverDue();
      expect(github.isDone()).toBe(true);

      const page = await signedInPage();
      await page.goto(`${server.url}/jobs/${job.id}`);
      expect(await page.locator('[data-resource-change="aws_subnet.b"]').textContent()).toContain('create');
      const card = page.locator('#vcs-feedback');
      expect(await card.textContent()).toContain('GitHub status (success)');
      expect(await card.textContent()).toContain('GitHub comment');
      expect(await page.locator('[data-vcs-feedback="ok"]').count()).toBe(2);
      await screenshot(page, 'vcs-feedback-delivered');
    });

    it('says a refused status is being retried, and why', async () => {
      const head = '2'.repeat(40);
      const job = await queueGitJob(uow, deps, { ownerId: adminId, vineId, trigger: pullRequestTrigger(head) });
      nock('https://api.github.com').post(`/repos/acme/infra/statuses/${head}`).reply(502, 'Bad Gateway');
      await server.useCases.vcsFeedback.deliverDue();
      const page = await signedInPage();
      await page.goto(`${server.url}/jobs/${job.id}`);
      const problem = page.locator('[data-vcs-feedback="problem"]');
      expect(await problem.textContent()).toContain('retrying after 1 attempt: provider_unavailable');
      expect(await page.content()).not.toContain(TOKEN);
      // A git-driven job that is still queued is cancelled so the vine is free for other tests.
      await (await server.userClient()).cancelJob(job.id);
    });
  },
);
