/**
 * Creating, renaming and deleting vineyards and creating and deleting configurations from the web
 * (issue 29), in Chromium against a real control plane on SQLite and Postgres, with the page script
 * turned off: every change is a plain form post. A configuration is created with inline files and
 * a sensitive variable whose value no HTML the browser receives afterwards holds, not even the form
 * shown again after a refusal; a refused input shows core's message beside its field and keeps the
 * typed files. An operator of an organization gets no create or manage controls, and core refuses
 * their forms if they post them anyway.
 */
import type { TrellisClient } from '@trellis/client';
import { checkTestPostgres } from '@trellis/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  BROWSER_TEST_TIMEOUT_MS,
  clickAndFollow,
  findChromium,
  HtmlAnswers,
  screenshot,
  postWithSession,
} from './support/browser.js';
import { describeInChromiumOnEachDialect, startWebOnDialect, type WebOnDialect } from './support/dialectSuite.js';
import { signInAtIssuer } from './support/oidcIssuer.js';
import { runJob } from './support/seed.js';
import { ADMIN_EMAIL, type AgentClient, BOOTSTRAP_TOKEN, MAIN_TF, type WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the create and delete pages suite');
const postgres = await checkTestPostgres();

const SECRET = 'pw-Zq81-never-in-any-page';
const VARIABLES_TF =
  'variable "region" {\n  type = string\n}\n\nvariable "db_password" {\n  type      = string\n  sensitive = true\n}\n';

describeInChromiumOnEachDialect(
  'creating and deleting vineyards and configurations in the web pages',
  { chromiumPath, postgres, timeout: BROWSER_TEST_TIMEOUT_MS },
  (dialect) => {
    let site: WebOnDialect<true>;
    let server: WebServer;
    let web: string;
    let admin: Page;
    let operator: Page;
    let client: TrellisClient;
    let orgId: string;
    let orgVineyardId: string;
    /** Every HTML document the admin's browser received (the secret must be in none). */
    const documents = new HtmlAnswers();
    let vineyardId: string;
    let vineId: string;

    /** A browser without the page script: what works here works without it. */
    async function scriptless(): Promise<Page> {
      const context = await site.newContext({ javaScriptEnabled: false });
      return context.newPage();
    }

    beforeAll(async () => {
      site = await startWebOnDialect(dialect, chromiumPath as string, { issuer: true });
      ({ server, localhostUrl: web } = site);

      admin = await scriptless();
      documents.watch(admin);
      await admin.goto(`${web}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
      await admin.waitForURL(`${web}/vineyards`);

      operator = await scriptless();
      await operator.goto(`${web}/vineyards`);
      await signInAtIssuer(operator, site.issuer, 'otto');
      await operator.waitForURL(`${web}/vineyards`);

      const organization = await server.organization('platform', ADMIN_EMAIL, [['otto@example.com', 'operator']]);
      orgId = organization.orgId;
      orgVineyardId = (await server.useCases.vineyards.create(organization.owner, { name: 'shared', org_id: orgId }))
        .id;
      client = await server.userClient(ADMIN_EMAIL);
    }, 90_000);

    afterAll(async () => {
      await site?.close();
    });

    it('creates a vineyard; a bad name is refused beside its field', async () => {
      await admin.goto(`${web}/vineyards`);
      expect((await clickAndFollow(admin, '[data-new-vineyard]')).pathname).toBe('/vineyards/new');
      await admin.fill('#vineyard-name', 'Bad Name!');
      const refused = await Promise.all([
        admin.waitForNavigation(),
        admin.click('[data-create-vineyard] button[type=submit]'),
      ]);
      expect(refused[0]?.status()).toBe(400);
      expect(await admin.locator('[data-form-error]').getAttribute('data-form-error')).toBe('validation_failed');
      expect(await admin.locator('[data-field-error="vineyard-name"]').textContent()).toContain('letters, digits');
      expect(await admin.inputValue('#vineyard-name')).toBe('Bad Name!');
      expect(await admin.getAttribute('#vineyard-name', 'aria-invalid')).toBe('true');

      await admin.fill('#vineyard-name', 'staging');
      const created = await clickAndFollow(admin, '[data-create-vineyard] button[type=submit]');
      vineyardId = created.pathname.split('/')[2] as string;
      expect(created.pathname).toBe(`/vineyards/${vineyardId}`);
      expect(await admin.locator('h1').textContent()).toBe('staging');
      expect((await client.getVineyard(vineyardId)).name).toBe('staging');
    });

    it('creates a vine with inline files and a sensitive variable; a refusal keeps the files, never the secret', async () => {
      await admin.goto(`${web}/vineyards/${vineyardId}`);
      expect((await clickAndFollow(admin, '[data-new-vine]')).pathname).toBe(
        `/vineyards/${vineyardId}/configurations/new`,
      );
      await admin.fill('#vine-name', 'api');
      await admin.fill('#file-0-name', 'main.tf');
      await admin.fill('#file-0-content', MAIN_TF);
      // Another file row, without script: the form comes back as typed, one row longer.
      await Promise.all([admin.waitForNavigation(), admin.click('[data-add-file]')]);
      expect(await admin.inputValue('#file-0-content')).toBe(MAIN_TF);
      await admin.fill('#file-1-name', '../variables.tf');
      await admin.fill('#file-1-content', VARIABLES_TF);
      await admin.fill('#variable-0-name', 'region');
      await admin.fill('#variable-0-value', 'eu-west-1');
      await Promise.all([admin.waitForNavigation(), admin.click('[data-add-variable]')]);
      await admin.fill('#variable-1-name', 'db_password');
      await admin.check('#variable-1-sensitive');
      await Promise.all([admin.waitForNavigation(), admin.click('[data-add-variable]')]);
      // Checked as sensitive, its field is a password field from here on.
      expect(await admin.getAttribute('#variable-1-value', 'type')).toBe('password');
      await admin.fill('#variable-1-value', SECRET);
      await admin.selectOption('#vine-approval', 'required');

      // The file name with '..' is refused by core beside its row; everything else stays as typed.
      const refusal = await Promise.all([admin.waitForNavigation(), admin.click('[data-create-vine-submit]')]);
      expect(refusal[0]?.status()).toBe(400);
      expect(await admin.locator('[data-field-error="file-1"]').textContent()).toContain("without '..'");
      expect(await admin.inputValue('#vine-name')).toBe('api');
      expect(await admin.inputValue('#file-0-content')).toBe(MAIN_TF);
      expect(await admin.inputValue('#file-1-name')).toBe('../variables.tf');
      expect(await admin.inputValue('#file-1-content')).toBe(VARIABLES_TF);
      expect(await admin.inputValue('#variable-0-value')).toBe('eu-west-1');
      expect(await admin.inputValue('#vine-approval')).toBe('required');
      expect(await admin.inputValue('#variable-1-name')).toBe('db_password');
      expect(await admin.isChecked('#variable-1-sensitive')).toBe(true);
      expect(await admin.inputValue('#variable-1-value')).toBe('');
      expect(await admin.locator('[data-sensitive-dropped]').count()).toBe(1);
      expect(await admin.locator('[data-retype]').count()).toBe(1);
      expect(await documents.holding(SECRET)).toEqual([]);
      await screenshot(admin, `vine-create-refused-${dialect}`);

      await admin.fill('#file-1-name', 'variables.tf');
      await admin.fill('#variable-1-value', SECRET);
      const created = await clickAndFollow(admin, '[data-create-vine-submit]');
      vineId = created.pathname.split('/')[2] as string;
      expect(created.pathname).toBe(`/configurations/${vineId}`);
      expect(await admin.locator('h1').textContent()).toBe('api');

      const vine = await client.getConfiguration(vineId);
      expect(vine).toMatchObject({
        name: 'api',
        vineyard_id: vineyardId,
        engine: { name: 'tofu', version: null },
        approval: { required: true, separate_approver: false },
        source: { type: 'inline', files: { 'main.tf': MAIN_TF, 'variables.tf': VARIABLES_TF } },
        variables: {
          region: { value: 'eu-west-1', sensitive: false },
          db_password: { value: '***', sensitive: true },
        },
      });
      // The value reached the configuration: a job's snapshot carries it to the agent.
      const agent: AgentClient = await server.agentClient(client, `agent-${dialect}`);
      const job = await client.createJob({ job_type: 'PLAN', configuration_id: vineId });
      const claimed = await agent.claimJob();
      expect(claimed?.job.id).toBe(job.id);
      expect(claimed?.job.config_snapshot.variables.db_password).toEqual({ value: SECRET, sensitive: true });
      await agent.reportStatus(job.id, { status: 'SUCCESS', execution_metadata: {} });

      for (const path of [`/configurations/${vineId}`, `/configurations/${vineId}/edit`, `/vineyards/${vineyardId}`]) {
        await admin.goto(`${web}${path}`);
      }
      expect(await documents.read()).toBeGreaterThan(8);
      expect(await documents.holding(SECRET)).toEqual([]);
    });

    it('creates a vine from a Git repository; a bad URL is refused beside its field', async () => {
      await admin.goto(`${web}/vineyards/${vineyardId}/configurations/new`);
      await admin.fill('#vine-name', 'infra');
      await admin.check('#source-git');
      await admin.fill('#git-url', 'not a url');
      await admin.selectOption('#vine-engine', 'terraform');
      await admin.fill('#vine-engine-version', '1.9.8');
      await Promise.all([admin.waitForNavigation(), admin.click('[data-create-vine-submit]')]);
      expect(await admin.locator('[data-field-error="git-url"]').count()).toBe(1);
      expect(await admin.isChecked('#source-git')).toBe(true);
      expect(await admin.inputValue('#vine-engine')).toBe('terraform');

      await admin.fill('#git-url', 'https://github.com/acme/infra.git');
      await admin.fill('#git-ref', 'main');
      await admin.fill('#git-path', 'stacks/web');
      const created = await clickAndFollow(admin, '[data-create-vine-submit]');
      const vine = await client.getConfiguration(created.pathname.split('/')[2] as string);
      expect(vine).toMatchObject({
        name: 'infra',
        engine: { name: 'terraform', version: '1.9.8' },
        source: { type: 'git', url: 'https://github.com/acme/infra.git', ref: 'main', path: 'stacks/web' },
        approval: null,
      });
    });

    it('renames a vineyard; a name it cannot take is refused with core’s message', async () => {
      await client.createVineyard('taken');
      await admin.goto(`${web}/vineyards/${vineyardId}`);
      await admin.fill('#vineyard-rename', 'taken');
      await Promise.all([admin.waitForNavigation(), admin.click('form[data-vineyard-rename] button')]);
      expect(await admin.locator('[data-form-error]').getAttribute('data-form-error')).toBe('vineyard_name_taken');
      expect(await admin.inputValue('#vineyard-name')).toBe('taken');

      await admin.fill('#vineyard-name', 'staging-eu');
      const renamed = await clickAndFollow(admin, 'form[data-vineyard-rename] button[type=submit]');
      expect(renamed.pathname).toBe(`/vineyards/${vineyardId}`);
      expect(await admin.locator('h1').textContent()).toBe('staging-eu');
    });

    it('deletes a vine (a deployed one only with force), refuses a non-empty vineyard, deletes an empty one', async () => {
      // A vineyard that still holds configurations is refused, with the names of what stands in the way.
      await admin.goto(`${web}/vineyards/${vineyardId}`);
      expect((await clickAndFollow(admin, '[data-delete-vineyard]')).pathname).toBe(`/vineyards/${vineyardId}/delete`);
      await admin.fill('#delete-confirm', 'staging-eu');
      const notEmpty = await Promise.all([admin.waitForNavigation(), admin.click('[data-confirm-delete]')]);
      expect(notEmpty[0]?.status()).toBe(409);
      expect(await admin.locator('[data-form-error]').getAttribute('data-form-error')).toBe('vineyard_not_empty');
      expect(await admin.locator('[data-form-error]').textContent()).toContain('api');

      // The vine is deployed (its plan approved, as its setting asks).
      const agent: AgentClient = await server.agentClient(client, `deployer-${dialect}`);
      await agent.heartbeat('1.0.0', []);
      const plan = await runJob(
        client,
        agent,
        { job_type: 'PLAN', configuration_id: vineId },
        { status: 'SUCCESS', artifact: true },
      );
      await client.approvePlan(plan.id);
      await runJob(
        client,
        agent,
        { job_type: 'DEPLOY', configuration_id: vineId, plan_job_id: plan.id },
        { status: 'SUCCESS' },
      );
      await admin.goto(`${web}/configurations/${vineId}/edit`);
      expect((await clickAndFollow(admin, '[data-delete-vine]')).pathname).toBe(`/configurations/${vineId}/delete`);
      // A wrong name deletes nothing.
      await admin.fill('#delete-confirm', 'apx');
      await Promise.all([admin.waitForNavigation(), admin.click('[data-confirm-delete]')]);
      expect(await admin.locator('[data-field-error="delete-confirm"]').textContent()).toContain('api');
      await admin.fill('#delete-confirm', 'api');
      const busy = await Promise.all([admin.waitForNavigation(), admin.click('[data-confirm-delete]')]);
      expect(busy[0]?.status()).toBe(409);
      expect(await admin.locator('[data-form-error]').getAttribute('data-form-error')).toBe('vine_has_resources');
      expect((await client.getConfiguration(vineId)).id).toBe(vineId);
      await screenshot(admin, `vine-delete-refused-${dialect}`);

      await admin.fill('#delete-confirm', 'api');
      await admin.check('#delete-force');
      const landed = await clickAndFollow(admin, '[data-confirm-delete]');
      expect(landed.pathname).toBe(`/vineyards/${vineyardId}`);
      await expect(client.getConfiguration(vineId)).rejects.toMatchObject({ status: 404 });

      await admin.goto(`${web}/configurations/${(await client.getConfiguration('infra')).id}/delete`);
      await admin.fill('#delete-confirm', 'infra');
      await clickAndFollow(admin, '[data-confirm-delete]');

      await admin.goto(`${web}/vineyards/${vineyardId}/delete`);
      await admin.fill('#delete-confirm', 'staging-eu');
      const gone = await clickAndFollow(admin, '[data-confirm-delete]');
      expect(gone.pathname).toBe('/vineyards');
      expect((await client.listVineyards()).map((each) => each.id)).not.toContain(vineyardId);
    });

    it('an operator gets no create or manage controls in the organization, and core refuses their forms', async () => {
      await operator.goto(`${web}/vineyards?org_id=${orgId}`);
      expect(await operator.locator('[data-new-vineyard]').count()).toBe(0);
      await operator.goto(`${web}/vineyards/${orgVineyardId}`);
      expect(await operator.locator('h1').textContent()).toBe('shared');
      expect(await operator.locator('[data-new-vine]').count()).toBe(0);
      expect(await operator.locator('[data-vineyard-manage]').count()).toBe(0);
      const newVine = await operator.goto(`${web}/vineyards/${orgVineyardId}/configurations/new`);
      expect(newVine?.status()).toBe(403);
      expect(await operator.locator('form[data-create-vine]').count()).toBe(0);
      // The new-vineyard form offers only their own records.
      await operator.goto(`${web}/vineyards/new`);
      expect(await operator.locator(`#vineyard-org option[value="${orgId}"]`).count()).toBe(0);

      // Posted anyway (same origin, their session): core refuses each, and the page says why.
      const post = (path: string, body: Record<string, string>) =>
        postWithSession(operator, `${web}${path}`, body, web);
      const refusals = [
        await post('/vineyards', { name: 'sneaky', org_id: orgId }),
        await post(`/vineyards/${orgVineyardId}/configurations`, {
          name: 'sneaky',
          source_type: 'inline',
          'files.0.name': 'main.tf',
          'files.0.content': MAIN_TF,
          'variables.0.name': 'token',
          'variables.0.value': SECRET,
          'variables.0.sensitive': 'true',
        }),
        await post(`/vineyards/${orgVineyardId}/rename`, { name: 'sneaky' }),
        await post(`/vineyards/${orgVineyardId}/delete`, { confirm: 'shared' }),
      ];
      for (const response of refusals) {
        expect(response.status).toBe(403);
        const body = await response.text();
        expect(body).toContain('this needs the role admin in the organization; yours is operator');
        expect(body).not.toContain(SECRET);
      }
      expect((await client.getVineyard(orgVineyardId)).name).toBe('shared');
      expect((await client.listVineyards()).map((each) => each.name)).not.toContain('sneaky');

      // From another site, even the admin's form is refused before any use case runs.
      const crossSite = await postWithSession(
        admin,
        `${web}/vineyards/${orgVineyardId}/delete`,
        'confirm=shared',
        'http://evil.example',
      );
      expect(crossSite.status).toBe(403);
      expect((await client.getVineyard(orgVineyardId)).name).toBe('shared');
    });
  },
);
