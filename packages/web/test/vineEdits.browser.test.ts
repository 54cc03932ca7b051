/**
 * Editing and deleting in the web interface (issue 25), in Chromium against a real control plane:
 * the edit page of a vine (name, engine, execution mode, variables with write-only sensitive values, inline files)
 * saves through the JSON API; a vine that manages resources is deleted only with force, and a
 * vineyard renamed and deleted once empty, through the plain forms of `vineyardEdits` (issue 29).
 */
import type { TrellisClient } from '@trellis/client';
import type { VineView, VineyardView } from '@trellis/core';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, clickAndFollow, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { runJob } from './support/seed.js';
import { type AgentClient, BOOTSTRAP_TOKEN, vineyardWithVine, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the edit and delete pages suite');

describe.skipIf(!chromiumPath)('editing and deleting in the web pages', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let server: WebServer;
  let browser: TestBrowser;
  let user: TrellisClient;
  let agent: AgentClient;
  let vine: VineView;
  let vineyard: VineyardView;
  const contexts: BrowserContext[] = [];

  async function signedInPage(): Promise<Page> {
    const { context, page } = await browser.context();
    contexts.push(context);
    await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
    page.on('dialog', (dialog) => void dialog.accept());
    return page;
  }

  beforeAll(async () => {
    server = await new WebServer().start();
    browser = await TestBrowser.launch(chromiumPath as string);
    user = await server.userClient();
    agent = await server.agentClient(user, 'edit-agent');
    ({ vine, vineyard } = await vineyardWithVine(user, 'web'));
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.close();
  });

  it('edits the name, engine, variables and files; a sensitive value is never on the page', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/configurations/${vine.id}`);
    const edit = await clickAndFollow(page, '[data-edit-vine]');
    expect(edit.pathname).toBe(`/configurations/${vine.id}/edit`);
    expect(await page.content()).not.toContain('s3cret-value');
    const secret = page.locator('tr[data-variable="db_password"] input[name^="value:"]');
    expect(await secret.getAttribute('type')).toBe('password');
    expect(await secret.inputValue()).toBe('');
    await screenshot(page, 'vine-edit-form');

    // A bad name is refused with the API's message; nothing changes.
    await page.fill('input[name=name]', 'Bad Name!');
    await page.click('[data-vine-save]');
    const error = page.locator('[data-action-error]');
    await error.waitFor({ state: 'visible' });
    expect(await error.textContent()).toContain('[validation_failed]');
    expect((await user.getConfiguration(vine.id)).name).toBe('web');

    await page.fill('input[name=name]', 'web-renamed');
    await page.selectOption('select[name=engine]', 'terraform');
    await page.fill('input[name=engine_version]', '1.9.8');
    await page.fill('tr[data-variable="greeting"] input[name^="value:"]', 'hello');
    await secret.fill('rotated-secret');
    await page.fill('input[name=new_name]', 'region');
    await page.fill('input[name=new_value]', 'eu-west-1');
    await page.fill('textarea[data-file="main.tf"]', 'output "edited" {\n  value = "yes"\n}\n');
    const saved = await clickAndFollow(page, '[data-vine-save]');
    expect(saved.pathname).toBe(`/configurations/${vine.id}`);
    expect(await page.locator('h1').textContent()).toBe('web-renamed');

    const after = await user.getConfiguration(vine.id);
    expect(after).toMatchObject({
      name: 'web-renamed',
      engine: { name: 'terraform', version: '1.9.8' },
      execution_mode: 'remote',
      variables: {
        greeting: { value: 'hello', sensitive: false },
        db_password: { value: '***', sensitive: true },
        region: { value: 'eu-west-1', sensitive: false },
      },
      source: { type: 'inline', files: { 'main.tf': 'output "edited" {\n  value = "yes"\n}\n' } },
    });
    // The new sensitive value reached the agent's snapshot: a job carries it.
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(job.id);
    expect(claimed?.job.config_snapshot.variables.db_password).toEqual({ value: 'rotated-secret', sensitive: true });
    await agent.reportStatus(job.id, { status: 'SUCCESS', execution_metadata: {} });
  });

  it('switches the execution mode; the state section shows it', async () => {
    const page = await signedInPage();
    await page.goto(`${server.url}/configurations/${vine.id}`);
    expect(await page.locator('[data-state-section] [data-execution-mode]').textContent()).toBe('remote');
    await page.goto(`${server.url}/configurations/${vine.id}/edit`);
    expect(await page.locator('select[name=execution_mode]').inputValue()).toBe('remote');
    await page.selectOption('select[name=execution_mode]', 'local');
    const saved = await clickAndFollow(page, '[data-vine-save]');
    expect(saved.pathname).toBe(`/configurations/${vine.id}`);
    expect(await page.locator('[data-state-section] [data-execution-mode]').textContent()).toBe('local');
    expect((await user.getConfiguration(vine.id)).execution_mode).toBe('local');
    await page.goto(`${server.url}/configurations/${vine.id}/edit`);
    expect(await page.locator('select[name=execution_mode]').inputValue()).toBe('local');
    await page.selectOption('select[name=execution_mode]', 'remote');
    await clickAndFollow(page, '[data-vine-save]');
    expect((await user.getConfiguration(vine.id)).execution_mode).toBe('remote');
  });

  it('deletes a deployed vine only with force, then the empty vineyard after renaming it', async () => {
    await runJob(user, agent, { job_type: 'DEPLOY', configuration_id: vine.id }, { status: 'SUCCESS' });
    const page = await signedInPage();
    await page.goto(`${server.url}/configurations/${vine.id}/edit`);
    expect((await clickAndFollow(page, '[data-delete-vine]')).pathname).toBe(`/configurations/${vine.id}/delete`);
    await page.fill('#delete-confirm', 'web-renamed');
    await Promise.all([page.waitForNavigation(), page.click('[data-confirm-delete]')]);
    const error = page.locator('[data-form-error]');
    expect(await error.getAttribute('data-form-error')).toBe('vine_has_resources');
    expect(await error.textContent()).toContain('still manages');
    expect((await user.getConfiguration(vine.id)).id).toBe(vine.id);

    await page.fill('#delete-confirm', 'web-renamed');
    await page.check('#delete-force');
    const landed = await clickAndFollow(page, '[data-confirm-delete]');
    expect(landed.pathname).toBe(`/vineyards/${vineyard.id}`);
    await expect(user.getConfiguration(vine.id)).rejects.toMatchObject({ status: 404 });

    await page.fill('form[data-vineyard-rename] input[name=name]', 'renamed-yard');
    // The form posts, and the answer leads back to the vineyard's page.
    await Promise.all([page.waitForNavigation(), page.click('form[data-vineyard-rename] button[type=submit]')]);
    expect(await page.locator('h1').textContent()).toBe('renamed-yard');
    await screenshot(page, 'vineyard-manage');
    await clickAndFollow(page, '[data-delete-vineyard]');
    await page.fill('#delete-confirm', 'renamed-yard');
    const gone = await clickAndFollow(page, '[data-confirm-delete]');
    expect(gone.pathname).toBe('/vineyards');
    expect((await user.listVineyards()).map((each) => each.id)).not.toContain(vineyard.id);
  });
});
