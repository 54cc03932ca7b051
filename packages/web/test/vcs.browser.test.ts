/**
 * A vine's repository connection in the web interface (issue 13), in Chromium against a real
 * control plane with GitHub's API answered by nock: an admin connects (Trellis creates the hook),
 * sees the repository, branch, paths and mode, connects with a manual webhook (the secret shown
 * once, in the page), and disconnects (the hook is deleted).
 */
import type { TrellisClient } from '@trellis/client';
import {
  coreServices,
  type SecretBox,
  sealProviderTokens,
  systemScope,
  type UnitOfWork,
  type VineView,
} from '@trellis/core';
import nock from 'nock';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BROWSER_TEST_TIMEOUT_MS,
  findChromium,
  screenshot,
  TestBrowser,
  clickAndConfirm,
  clickAndFollow,
} from './support/browser.js';
import { ADMIN_EMAIL, BOOTSTRAP_TOKEN, vineyardWithVine, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the repository connection suite');
const TOKEN = 'gho_admin_token_for_web_tests';

describe.skipIf(!chromiumPath)(
  'connecting a vine to a repository in the web pages',
  { timeout: BROWSER_TEST_TIMEOUT_MS },
  () => {
    let server: WebServer;
    let browser: TestBrowser;
    let user: TrellisClient;
    let web: VineView;
    const contexts: BrowserContext[] = [];

    async function signedInPage(): Promise<Page> {
      const { context, page } = await browser.context();
      contexts.push(context);
      await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
      page.on('dialog', (dialog) => void dialog.accept());
      return page;
    }

    beforeAll(async () => {
      nock.disableNetConnect();
      nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);
      server = await new WebServer({
        env: { TRELLIS_GITHUB_CLIENT_ID: 'github-client', TRELLIS_GITHUB_CLIENT_SECRET: 'github-secret' },
      }).start();
      browser = await TestBrowser.launch(chromiumPath as string);
      user = await server.userClient();
      web = (await vineyardWithVine(user, 'web')).vine;
      const container = server.controlPlane?.container;
      if (!container) throw new Error('the server is not running');
      const admin = await server.useCases.auth.ensureUser({ email: ADMIN_EMAIL });
      const sealed = await sealProviderTokens(
        container.resolve<SecretBox>(coreServices.secretBox.id),
        { provider: 'github', provider_user_id: '1' },
        { accessToken: TOKEN, refreshToken: null, expiresAt: null },
      );
      await container.resolve<UnitOfWork>(coreServices.unitOfWork.id).run(systemScope, (stores) =>
        stores.identities.upsert({
          user_id: admin.id,
          provider: 'github',
          provider_user_id: '1',
          provider_token: sealed,
          scopes: 'repo,admin:repo_hook',
        }),
      );
    });

    afterAll(async () => {
      for (const context of contexts) await context.close();
      await browser?.close();
      await server?.close();
      nock.cleanAll();
      nock.enableNetConnect();
    });

    it('connects with an automatic webhook, shows the connection, then disconnects', async () => {
      const page = await signedInPage();
      await page.goto(`${server.url}/configurations/${web.id}`);
      expect(await page.locator('[data-vcs-none]').count()).toBe(1);

      let hookUrl = '';
      const create = nock('https://api.github.com', { reqheaders: { authorization: `Bearer ${TOKEN}` } })
        .post('/repos/acme/infra/hooks', (body: { config: { url: string } }) => {
          hookUrl = body.config.url;
          return true;
        })
        .reply(201, { id: 77 });
      await page.fill('form[data-vcs-connect] input[name="repository"]', 'acme/infra');
      await page.fill('form[data-vcs-connect] input[name="branch"]', 'main');
      await page.fill('form[data-vcs-connect] input[name="paths"]', 'infra/**, modules/**');
      await page.check('form[data-vcs-connect] input[name="auto_deploy"]');
      // Pull requests from forks: off unless chosen.
      expect(await page.inputValue('form[data-vcs-connect] select[name="fork_pull_requests"]')).toBe('off');
      await page.selectOption('form[data-vcs-connect] select[name="fork_pull_requests"]', 'without_secrets');
      await Promise.all([page.waitForEvent('load'), page.click('[data-vcs-save]')]);
      expect(create.isDone()).toBe(true);
      expect((await user.getRepositoryConnection(web.id)).fork_pull_requests).toBe('without_secrets');
      expect(await page.locator('[data-vcs-fork-pull-requests]').getAttribute('data-vcs-fork-pull-requests')).toBe(
        'without_secrets',
      );
      expect(await page.locator('[data-vcs-fork-pull-requests]').textContent()).toBe('planned without secrets');
      expect(await page.inputValue('form[data-vcs-connect] select[name="fork_pull_requests"]')).toBe('without_secrets');
      expect(hookUrl).toBe(`${server.controlPlane?.config.webUrl}/api/webhooks/github?vine=${web.id}`);
      expect(await page.locator('[data-vcs-repository]').textContent()).toBe('GitHub acme/infra');
      expect(await page.locator('[data-vcs-status]').getAttribute('data-vcs-status')).toBe('connected');
      expect(await page.locator('[data-vcs-branch]').textContent()).toBe('main');
      expect(await page.locator('[data-vcs-paths]').textContent()).toBe('infra/**, modules/**');
      expect(await page.locator('[data-vcs-pushes]').textContent()).toBe('plan, then deploy a successful plan');
      expect(await page.locator('[data-vcs-mode]').getAttribute('data-vcs-mode')).toBe('auto');
      expect(await page.locator('[data-vcs-mode]').textContent()).toContain('77');
      expect((await user.getConfiguration(web.id)).source).toMatchObject({
        type: 'git',
        url: 'https://github.com/acme/infra.git',
        ref: 'main',
      });
      await screenshot(page, 'vcs-connected-auto');

      const remove = nock('https://api.github.com').delete('/repos/acme/infra/hooks/77').reply(204);
      await clickAndConfirm(page, '[data-vcs-disconnect]');
      expect(remove.isDone()).toBe(true);
      expect(await page.locator('[data-vcs-none]').count()).toBe(1);
    });

    it('a manual webhook: the secret is shown once in the page, never when the vine is shown again', async () => {
      const page = await signedInPage();
      await page.goto(`${server.url}/configurations/${web.id}`);
      await page.fill('form[data-vcs-connect] input[name="repository"]', 'acme/infra');
      await page.uncheck('form[data-vcs-connect] input[name="pull_requests"]');
      await page.check('form[data-vcs-connect] input[name="manual"]');
      await page.click('[data-vcs-save]');
      await page.locator('[data-vcs-secret]:not([hidden])').waitFor();
      const secret = (await page.locator('[data-vcs-secret-value]').textContent()) ?? '';
      expect(secret).toMatch(/^[0-9a-f]{64}$/);
      expect(await page.locator('[data-vcs-secret-url]').textContent()).toBe(
        `${server.controlPlane?.config.webUrl}/api/webhooks/github?vine=${web.id}`,
      );
      await screenshot(page, 'vcs-manual-secret');

      await clickAndFollow(page, '[data-vcs-done]');
      expect(await page.locator('[data-vcs-mode]').getAttribute('data-vcs-mode')).toBe('manual');
      expect(await page.locator('[data-vcs-pull-requests]').textContent()).toBe('ignored');
      expect(await page.locator('[data-vcs-fork-pull-requests]').textContent()).toBe('not planned (neutral status)');
      expect(await page.content()).not.toContain(secret);
      await user.disconnectRepository(web.id);
    });

    it('names a refused field by its label, once', async () => {
      const page = await signedInPage();
      await page.goto(`${server.url}/configurations/${web.id}`);
      await page.fill('form[data-vcs-connect] input[name="repository"]', 'acme/infra');
      await page.fill('form[data-vcs-connect] input[name="paths"]', '/infra/**');
      await page.check('form[data-vcs-connect] input[name="manual"]');
      await page.click('[data-vcs-save]');
      const alert = page.locator('[data-action-error]:not([hidden])');
      await alert.waitFor();
      expect(await alert.textContent()).toBe(
        "the repository connection is not valid (Paths is relative to the repository's root: no leading '/') [validation_failed]",
      );
      await screenshot(page, 'vcs-refused-field');
    });

    it('shows a provider refusal in the page', async () => {
      const page = await signedInPage();
      await page.goto(`${server.url}/configurations/${web.id}`);
      nock('https://api.github.com')
        .post('/repos/acme/private/hooks')
        .reply(403, { message: 'Must have admin rights to Repository.' });
      await page.fill('form[data-vcs-connect] input[name="repository"]', 'acme/private');
      await page.uncheck('form[data-vcs-connect] input[name="manual"]');
      await page.click('[data-vcs-save]');
      const alert = page.locator('[data-action-error]:not([hidden])');
      await alert.waitFor();
      expect(await alert.textContent()).toContain('[vcs_permission_missing]');
    });
  },
);
