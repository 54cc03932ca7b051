/**
 * The new-configuration form's tags, cloud identity, run triggers and uploaded directory, and the
 * edit page's tags (issue 29), in Chromium without the page script against a real control plane on
 * SQLite and Postgres: a directory chosen in the file input becomes the inline source (paths kept
 * relative to it, `.terraform/` and state files left out); a refusal shows core's messages beside
 * the fields and keeps everything typed and uploaded, but no sensitive value; axe-core finds
 * nothing serious on the form, the refused form and the edit page.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrellisClient } from '@trellis/client';
import { checkTestPostgres } from '@trellis/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { seriousViolations } from './support/axe.js';
import { BROWSER_TEST_TIMEOUT_MS, findChromium, HtmlAnswers, screenshot } from './support/browser.js';
import { describeInChromiumOnEachDialect, startWebOnDialect, type WebOnDialect } from './support/dialectSuite.js';
import { ADMIN_EMAIL, BOOTSTRAP_TOKEN, MAIN_TF, type WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the new-configuration extras suite');
const postgres = await checkTestPostgres();

const SECRET = 'upl-Secret-93x-never-in-a-page';
const ROLE = 'arn:aws:iam::123456789012:role/trellis-deploy';
const MODULE_TF = 'variable "cidr" {\n  type = string\n}\n\noutput "cidr" {\n  value = var.cidr\n}\n';

describeInChromiumOnEachDialect(
  'the new-configuration form: tags, cloud identity, run triggers, an uploaded directory',
  { chromiumPath, postgres, timeout: BROWSER_TEST_TIMEOUT_MS },
  (dialect) => {
    let site: WebOnDialect;
    let server: WebServer;
    let web: string;
    let page: Page;
    let client: TrellisClient;
    let vineyardId: string;
    let networkId: string;
    let dir: string;
    /** The pages received while the secret is typed (it must be in none). */
    const documents = new HtmlAnswers();
    async function signedIn(options: { script: boolean }): Promise<Page> {
      const context = await site.newContext({
        javaScriptEnabled: options.script,
        // axe-core goes in as an inline script, which the pages' CSP would refuse.
        bypassCSP: options.script,
      });
      const opened = await context.newPage();
      await opened.goto(`${web}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
      await opened.waitForURL(`${web}/vineyards`);
      return opened;
    }

    /** Submits the form with its create button; resolves with the answer's status once landed. */
    async function create(on: Page): Promise<number | undefined> {
      const [response] = await Promise.all([on.waitForNavigation(), on.click('[data-create-vine-submit]')]);
      return response?.status();
    }

    beforeAll(async () => {
      site = await startWebOnDialect(dialect, chromiumPath as string);
      ({ server, localhostUrl: web } = site);
      page = await signedIn({ script: false });
      client = await server.userClient(ADMIN_EMAIL);
      vineyardId = (await client.createVineyard('uploads')).id;
      networkId = (
        await client.createConfiguration({
          name: 'network',
          vineyard_id: vineyardId,
          source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
        })
      ).id;
      // The directory a person chooses: configuration files, and what is no part of one.
      dir = mkdtempSync(join(tmpdir(), 'trellis-upload-'));
      const infra = join(dir, 'infra');
      mkdirSync(join(infra, 'modules', 'net'), { recursive: true });
      mkdirSync(join(infra, '.terraform', 'providers'), { recursive: true });
      writeFileSync(join(infra, 'main.tf'), MAIN_TF);
      writeFileSync(join(infra, 'modules', 'net', 'main.tf'), MODULE_TF);
      writeFileSync(join(infra, 'prod.tfvars'), 'cidr = "10.0.0.0/16"\n');
      writeFileSync(join(infra, 'terraform.tfstate'), '{"version": 4}\n');
      writeFileSync(join(infra, '.terraform', 'providers', 'terraform-provider-null'), Buffer.from([0, 159, 146, 150]));
      writeFileSync(join(infra, 'README.md'), '# infra\n');
    }, 90_000);

    afterAll(async () => {
      await site?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('creates a configuration from an uploaded directory, with tags, an OIDC identity and a run trigger', async () => {
      await page.goto(`${web}/vineyards/${vineyardId}/configurations/new`);
      await page.fill('#vine-name', 'web');
      await page.fill('#vine-tags', 'prod, Team:Web');
      await page.check('#source-upload');
      await page.setInputFiles('#vine-upload', join(dir, 'infra'));
      await page.selectOption('#identity-kind', 'oidc_aws');
      await page.fill('#identity-role-arn', ROLE);
      await page.fill('#identity-session-duration', '1800');
      await page.check(`#trigger-${networkId}`);
      expect(await create(page)).toBe(200);
      expect(new URL(page.url()).pathname).toMatch(/^\/configurations\/[0-9a-f-]{36}$/);

      const vine = await client.getConfiguration('web');
      expect(vine.source).toEqual({
        type: 'inline',
        files: { 'main.tf': MAIN_TF, 'modules/net/main.tf': MODULE_TF, 'prod.tfvars': 'cidr = "10.0.0.0/16"\n' },
      });
      expect(vine.tags).toEqual(['prod', 'team:web']);
      expect(vine.triggers.after).toEqual([networkId]);
      expect(vine.cloud_identity).toMatchObject({
        kind: 'oidc',
        provider: 'aws',
        role_arn: ROLE,
        session_duration: 1800,
      });
      // The vine's page shows its tags, each a link to the fleet filtered by it.
      expect(await page.locator('[data-vine-tags] [data-tag]').allTextContents()).toEqual(['prod', 'team:web']);
      expect(await page.getAttribute('[data-vine-tags] [data-tag="team:web"]', 'href')).toBe('/fleet?tag=team%3Aweb');
    });

    it('refuses bad fields beside them, keeps what was typed and uploaded but no sensitive value; fixed, it creates', async () => {
      onTestFinished(documents.watch(page));
      await page.goto(`${web}/vineyards/${vineyardId}/configurations/new`);
      await page.fill('#vine-name', 'db');
      await page.fill('#vine-tags', 'ok, not/ok');
      await page.check('#source-upload');
      // Files chosen one by one keep their names.
      await page.setInputFiles('#vine-upload-files', [
        { name: 'main.tf', mimeType: 'text/plain', buffer: Buffer.from(MAIN_TF) },
        { name: 'net.tf', mimeType: 'text/plain', buffer: Buffer.from(MODULE_TF) },
      ]);
      await page.selectOption('#identity-kind', 'assume_role');
      await page.fill('#identity-role-arn', 'not-an-arn');
      await page.fill('#variable-0-name', 'db_password');
      await page.fill('#variable-0-value', SECRET);
      await page.check('#variable-0-sensitive');
      await page.check(`#trigger-${networkId}`);
      expect(await create(page)).toBe(400);

      await screenshot(page, `vine-new-extras-refused-${dialect}`);
      expect(await page.getAttribute('[data-form-error]', 'data-form-error')).toBe('validation_failed');
      expect(await page.textContent('[data-field-error="vine-tags"]')).toContain('"not/ok" is not a tag');
      expect(await page.textContent('[data-field-error="identity-role-arn"]')).toContain('must be an IAM role ARN');
      expect(await page.getAttribute('#identity-role-arn', 'aria-invalid')).toBe('true');
      // As typed: the name, the tags, the identity, the trigger, the upload (listed, not sent again).
      expect(await page.inputValue('#vine-name')).toBe('db');
      expect(await page.inputValue('#vine-tags')).toBe('ok, not/ok');
      expect(await page.inputValue('#identity-kind')).toBe('assume_role');
      expect(await page.inputValue('#identity-role-arn')).toBe('not-an-arn');
      expect(await page.isChecked(`#trigger-${networkId}`)).toBe(true);
      expect(await page.isChecked('#source-upload')).toBe(true);
      expect(
        await page
          .locator('[data-uploaded-file]')
          .evaluateAll((items) => items.map((item) => item.getAttribute('data-uploaded-file'))),
      ).toEqual(['main.tf', 'net.tf']);
      expect(await page.isVisible('[data-sensitive-dropped]')).toBe(true);
      expect(await page.inputValue('#variable-0-value')).toBe('');
      expect(await documents.holding(SECRET)).toEqual([]);
      expect(await client.getConfiguration('db').catch((error: { status?: number }) => error.status)).toBe(404);

      // Fixed and the secret typed again; the uploaded files come with the form, not chosen again.
      await page.fill('#vine-tags', 'ok');
      await page.fill('#identity-role-arn', ROLE);
      await page.fill('#variable-0-value', SECRET);
      expect(await create(page)).toBe(200);
      const vine = await client.getConfiguration('db');
      expect(vine.source).toEqual({ type: 'inline', files: { 'main.tf': MAIN_TF, 'net.tf': MODULE_TF } });
      expect(vine.tags).toEqual(['ok']);
      expect(vine.triggers.after).toEqual([networkId]);
      expect(vine.cloud_identity).toMatchObject({ kind: 'assume_role', role_arn: ROLE });
      expect(vine.variables.db_password).toEqual({ value: '***', sensitive: true });
      // The value typed again is what a job gets, with the uploaded files.
      const agent = await server.agentClient(client, `upload-agent-${dialect}`);
      const job = await client.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      const claimed = await agent.claimJob();
      expect(claimed?.job.id).toBe(job.id);
      expect(claimed?.job.config_snapshot.variables.db_password).toEqual({ value: SECRET, sensitive: true });
      expect(await documents.read()).toBeGreaterThanOrEqual(2);
      expect(await documents.holding(SECRET)).toEqual([]);
    });

    it('refuses an upload without a configuration file, and an upload source with nothing chosen', async () => {
      await page.goto(`${web}/vineyards/${vineyardId}/configurations/new`);
      await page.fill('#vine-name', 'empty');
      await page.check('#source-upload');
      expect(await create(page)).toBe(400);
      expect(await page.textContent('[data-field-error="vine-upload"]')).toContain('choose a directory');
      await page.setInputFiles('#vine-upload-files', [
        { name: 'notes.md', mimeType: 'text/plain', buffer: Buffer.from('# not a configuration\n') },
      ]);
      expect(await create(page)).toBe(400);
      expect(await page.textContent('[data-field-error="vine-upload"]')).toContain('holds no configuration file');
      expect(await page.inputValue('#vine-name')).toBe('empty');
    });

    it('changes the tags on the edit page', async () => {
      const vine = await client.getConfiguration('web');
      await page.goto(`${web}/configurations/${vine.id}/edit`);
      expect(await page.inputValue('[data-vine-tags-field]')).toBe('prod, team:web');
      await page.fill('[data-vine-tags-field]', 'eu team:web');
      await Promise.all([page.waitForNavigation(), page.click('[data-vine-save]')]);
      expect(new URL(page.url()).pathname).toBe(`/configurations/${vine.id}`);
      expect((await client.getConfiguration('web')).tags).toEqual(['eu', 'team:web']);
      // A bad tag is refused and the field keeps what was typed.
      await page.goto(`${web}/configurations/${vine.id}/edit`);
      await page.fill('[data-vine-tags-field]', 'eu, no/good');
      const [refused] = await Promise.all([page.waitForNavigation(), page.click('[data-vine-save]')]);
      expect(refused?.status()).toBe(400);
      expect(await page.textContent('body')).toContain('"no/good" is not a tag');
      expect(await page.inputValue('[data-vine-tags-field]')).toBe('eu, no/good');
      expect((await client.getConfiguration('web')).tags).toEqual(['eu', 'team:web']);
    });

    it("axe-core finds nothing serious on the form, the refused form, the edit page and a tagged vine's page", async () => {
      const checked = await signedIn({ script: true });
      await checked.goto(`${web}/vineyards/${vineyardId}/configurations/new`);
      expect(await seriousViolations(checked)).toEqual([]);
      await checked.fill('#vine-name', 'Bad Name!');
      await checked.fill('#vine-tags', 'a/b');
      await checked.selectOption('#identity-kind', 'oidc_gcp');
      await checked.fill('#identity-workload-identity-provider', 'nope');
      await checked.check('#source-upload');
      await checked.setInputFiles('#vine-upload', join(dir, 'infra'));
      expect(await create(checked)).toBe(400);
      expect(await checked.isVisible('[data-field-error="identity-workload-identity-provider"]')).toBe(true);
      expect(await seriousViolations(checked)).toEqual([]);
      const vine = await client.getConfiguration('web');
      await checked.goto(`${web}/configurations/${vine.id}/edit`);
      expect(await seriousViolations(checked)).toEqual([]);
      await checked.goto(`${web}/configurations/${vine.id}`);
      expect(await checked.locator('[data-vine-tags] [data-tag]').count()).toBeGreaterThan(0);
      expect(await seriousViolations(checked)).toEqual([]);
    });
  },
);
