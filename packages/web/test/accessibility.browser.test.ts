/**
 * Every page of the web interface in Chromium against a real control plane holding real records
 * (issue 29): axe-core finds no serious or critical violation on any of them, no page scrolls
 * sideways on a phone (375×812) and the header keeps its navigation on screen there, and a keyboard
 * user tabs from the top of a page through the "skip to content" link into the main content with a
 * visible focus outline. With `TRELLIS_WEB_SCREENSHOTS=1` it also saves the screenshots of
 * docs/web.md into docs/web/ (desktop and phone width).
 *
 * SQLite only: the pages are the same templates over either store, and a second run on Postgres
 * would double the suite's time without reaching anything the store decides.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TrellisClient } from '@trellis/client';
import { type PlanChanges, personalNamespace, type UserActor } from '@trellis/core';
import { chunksOf, FakeClock, requirePeer, tarGz } from '@trellis/testkit';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe.js';
import { BROWSER_TEST_TIMEOUT_MS, findChromium, TestBrowser } from './support/browser.js';
import { PLAN_LOG, runJob } from './support/seed.js';
import { ADMIN_EMAIL, type AgentClient, BOOTSTRAP_TOKEN, MAIN_TF, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the accessibility suite');
const OPA = requirePeer('opa', 'the accessibility suite (a policy on the policies pages)');
const DOCS_SCREENSHOTS = fileURLToPath(new URL('../../../docs/web/', import.meta.url));
const SAVE_SCREENSHOTS = process.env.TRELLIS_WEB_SCREENSHOTS === '1';

const PHONE = { width: 375, height: 812 };
const DESKTOP = { width: 1280, height: 800 };

const POLICY = `package trellis.sizes

deny contains msg if {
  some rc in input.resource_changes
  rc.type == "aws_instance"
  not rc.change.after.instance_type in {"t3.micro", "t3.small"}
  msg := sprintf("%s: instance type %s is not allowed", [rc.address, rc.change.after.instance_type])
}
`;

const VARIABLES = `variable "cidr" {
  description = "The network's address range"
  type        = string
  default     = "10.0.0.0/16"
}
`;

/** A state file (format 4) as tofu writes it, with a resource in the root module and an output. */
const STATE = JSON.stringify({
  version: 4,
  terraform_version: '1.8.0',
  serial: 1,
  lineage: 'lineage-of-the-web-vine',
  outputs: { endpoint: { value: 'https://web.example', type: 'string' } },
  resources: [
    {
      mode: 'managed',
      type: 'null_resource',
      name: 'web',
      provider: 'provider["registry.opentofu.org/hashicorp/null"]',
      instances: [{ schema_version: 0, attributes: { id: '1' } }],
    },
  ],
});

/** The plan's change document (issue 29): its job page shows the tree, checked like every page. */
const PLAN_CHANGES: PlanChanges = {
  format_version: 1,
  resource_changes: [
    {
      address: 'aws_s3_bucket.logs',
      module_address: null,
      type: 'aws_s3_bucket',
      name: 'logs',
      actions: ['create'],
      attributes: [
        { path: 'bucket', after: { value: 'acme-production-logs' } },
        { path: 'arn', after: { unknown: true } },
      ],
      attributes_omitted: 0,
      unchanged_attributes: 0,
    },
    {
      address: 'module.eks.aws_eks_cluster.main',
      module_address: 'module.eks',
      type: 'aws_eks_cluster',
      name: 'main',
      actions: ['delete', 'create'],
      attributes: [
        { path: 'version', before: { value: '1.29' }, after: { value: '1.30' }, forces_replacement: true },
        { path: 'encryption_config[0].provider.key_arn', before: { sensitive: true }, after: { sensitive: true } },
      ],
      attributes_omitted: 0,
      unchanged_attributes: 6,
    },
  ],
  resource_changes_omitted: 0,
  output_changes: [],
  output_changes_omitted: 0,
  truncated: false,
};

/** What sticks out sideways on a phone: the page's width beyond the window, and the header's. */
async function phoneLayout(page: Page) {
  return page.evaluate(() => {
    const header = document.querySelector('header.topbar');
    const navLinks = [...document.querySelectorAll('header nav a')];
    const sticksOut = (element: Element) => element.getBoundingClientRect().right > window.innerWidth + 0.5;
    const describe = (element: Element) =>
      `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}${[...element.classList].map((c) => `.${c}`).join('')}`;
    return {
      overflow: document.documentElement.scrollWidth - window.innerWidth,
      // The innermost elements past the window's right edge, to say what to fix.
      culprits: [...document.querySelectorAll('main *')]
        .filter((element) => sticksOut(element) && ![...element.children].some(sticksOut))
        .slice(0, 4)
        .map((element) => `${describe(element.parentElement as Element)} > ${describe(element)}`),
      headerOverflow: header ? header.scrollWidth - header.clientWidth : 0,
      // Every navigation link lies within the window (the bar wraps; nothing is cut off).
      linksOffScreen: navLinks
        .filter((a) => {
          const box = a.getBoundingClientRect();
          return box.left < 0 || box.right > window.innerWidth + 0.5;
        })
        .map((a) => a.textContent),
    };
  });
}

/** Sends an empty form from the page, as a person pressing its button would. */
async function postEmptyForm(page: Page, action: string): Promise<void> {
  await page.evaluate((url) => {
    const form = document.createElement('form');
    form.method = 'post';
    form.action = url;
    document.body.append(form);
    form.submit();
  }, action);
}

describe.skipIf(!chromiumPath)(
  `every page's accessibility and phone layout`,
  {
    timeout: BROWSER_TEST_TIMEOUT_MS,
  },
  () => {
    let server: WebServer;
    let browser: TestBrowser;
    let web: string;
    const contexts: BrowserContext[] = [];
    /** Script errors of any page: the pages must work as they are, not only look right. */
    const scriptErrors: string[] = [];
    /** Path and name of each page, signed in as the bootstrap admin. */
    const pages: { name: string; path: string }[] = [];

    async function signedInPage(viewport = DESKTOP): Promise<Page> {
      const page = await signedOutPage(viewport);
      await page.goto(`${web}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
      await page.waitForURL(`${web}/vineyards`);
      return page;
    }

    async function signedOutPage(viewport = DESKTOP): Promise<Page> {
      // axe-core goes in as an inline script, which the pages' CSP (script-src 'self') would refuse.
      const context = await browser.browser.newContext({ viewport, bypassCSP: true });
      context.setDefaultTimeout(20_000);
      contexts.push(context);
      const page = await context.newPage();
      page.on('pageerror', (error) => scriptErrors.push(`${page.url()}: ${error.message}`));
      return page;
    }

    /**
     * The pages a signed-out visitor sees: sign-in, "sign in again" after a form sent without a
     * session, and the refusal of a form sent from another site.
     */
    async function visitSignedOut(page: Page, visit: (name: string) => Promise<void>) {
      await page.goto(`${web}/signin`);
      await visit('signin');
      await postEmptyForm(page, `${web}/tokens`);
      await page.waitForSelector('main h1:text("Your session has ended")');
      await visit('sign-in-again');
      // A form sent from another site (here a blank page, whose Origin is `null`) is refused with a page.
      await page.goto('about:blank');
      await postEmptyForm(page, `${web}/cli/login`);
      await page.waitForSelector('main h1:text("Request refused")');
      await visit('cross-site');
    }

    /** A form core refused, shown again with its problem and the messages beside the fields. */
    async function visitRefused(page: Page, visit: (name: string) => Promise<void>) {
      const entry = pages.find((p) => p.name === 'vine-new');
      if (!entry) return;
      await page.goto(`${web}${entry.path}`);
      await page.fill('#vine-name', 'Bad Name!');
      await page.fill('#file-0-name', '../main.tf');
      await page.fill('#variable-0-name', 'token');
      await page.fill('#variable-0-value', 'not-shown-again');
      await page.check('#variable-0-sensitive');
      await Promise.all([page.waitForNavigation(), page.click('[data-create-vine-submit]')]);
      await page.waitForSelector('[data-form-error]');
      await visit('vine-new-refused');
    }

    beforeAll(async () => {
      server = await new WebServer({
        clock: new FakeClock(new Date()),
        signInProviders: [
          { id: 'github', name: 'GitHub' },
          { id: 'google', name: 'Google' },
        ],
        env: {
          TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS: 'true',
          ...(OPA ? { TRELLIS_OPA_BIN: OPA } : {}),
        },
      }).start();
      web = `http://localhost:${server.port}`;
      browser = await TestBrowser.launch(chromiumPath as string);
      await signedInPage(); // the bootstrap admin's account exists from here on

      const { useCases } = server;
      const admin = await useCases.auth.ensureUser({ email: ADMIN_EMAIL });
      const actor: UserActor = { userId: admin.id, email: admin.email };
      const user: TrellisClient = await server.userClient();
      const org = await user.createOrg('platform');
      const vineyard = await useCases.vineyards.create(actor, { name: 'production', org_id: org.id });
      const vine = await useCases.vines.create(actor, {
        name: 'web',
        vineyard_id: vineyard.id,
        source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
      });
      const { worker_id, worker_token } = await user.registerWorker({ name: 'build-01', orgId: org.id });
      const agent = new TrellisClient({
        baseUrl: server.url,
        auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
      }) as AgentClient;
      agent.workerId = worker_id;
      await agent.heartbeat('1.4.2', []);
      const plan = await runJob(
        user,
        agent,
        { job_type: 'PLAN', configuration_id: vine.id },
        {
          logs: PLAN_LOG,
          artifact: true,
          changes: PLAN_CHANGES,
          status: 'SUCCESS',
          // As the engine counts PLAN_CHANGES: a creation, and a replacement once each way.
          execution_metadata: { plan_summary: { add: 2, change: 0, destroy: 1 } },
        },
      );
      // A deploy that writes the vine's state through the `http` backend, as the engine does.
      const deploy = await user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
      const claimed = await agent.claimJob();
      expect(claimed?.job.id).toBe(deploy.id);
      const written = await fetch(`${server.url}/api/state/${vine.id}`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${agent.workerId}:${claimed?.state_token}`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body: STATE,
      });
      expect(written.status).toBe(200);
      await agent.appendLog(deploy.id, 'Apply complete! Resources: 1 added, 0 changed, 0 destroyed.\n', 'STDOUT');
      await agent.reportStatus(deploy.id, { status: 'SUCCESS' });

      // Two jobs left queued for the queue page, the second waiting for the first (same vine).
      const queued = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });

      await user.createToken({ name: 'pipeline', expires_in_days: 30 });
      const notification = await user.createNotification({
        name: 'ops',
        kind: 'webhook',
        url: 'https://127.0.0.1:9/hook',
        events: ['job.failed', 'drift.detected'],
      });
      const namespace = personalNamespace(admin.id);
      await useCases.registryModules.publish(
        actor,
        { namespace, name: 'vpc', system: 'aws', version: '1.0.0' },
        chunksOf(
          tarGz([
            { path: 'variables.tf', content: VARIABLES },
            { path: 'README.md', content: '# VPC\n\nA network for every team.\n' },
          ]),
        ),
      );

      pages.push(
        { name: 'fleet', path: '/fleet' },
        { name: 'fleet-filtered', path: '/fleet?status=DEPLOYED&drift=never_checked' },
        { name: 'vineyards', path: '/vineyards' },
        { name: 'vineyard', path: `/vineyards/${vineyard.id}` },
        { name: 'vine', path: `/configurations/${vine.id}` },
        { name: 'vine-edit', path: `/configurations/${vine.id}/edit` },
        { name: 'vineyard-new', path: '/vineyards/new' },
        { name: 'vineyard-rename', path: `/vineyards/${vineyard.id}/rename` },
        { name: 'vineyard-delete', path: `/vineyards/${vineyard.id}/delete` },
        { name: 'vine-new', path: `/vineyards/${vineyard.id}/configurations/new` },
        { name: 'vine-delete', path: `/configurations/${vine.id}/delete` },
        { name: 'state', path: `/configurations/${vine.id}/state` },
        { name: 'jobs', path: '/jobs' },
        { name: 'job', path: `/jobs/${deploy.id}` },
        { name: 'plan', path: `/jobs/${plan.id}` },
        { name: 'queue', path: '/queue' },
        { name: 'job-queued', path: `/jobs/${queued.id}` },
        { name: 'workers', path: '/workers' },
        { name: 'orgs', path: '/orgs' },
        { name: 'org', path: `/orgs/${org.id}` },
        { name: 'tokens', path: '/tokens' },
        { name: 'notifications', path: '/notifications' },
        { name: 'notification', path: `/notifications/${notification.id}` },
        { name: 'policies', path: '/policies' },
        { name: 'registry', path: '/registry' },
        { name: 'registry-module', path: `/registry/${namespace}/vpc/aws` },
        { name: 'registry-providers', path: '/registry/providers' },
        { name: 'registry-gpg-keys', path: '/registry/gpg-keys' },
        { name: 'registry-mirror', path: '/registry/mirror' },
        { name: 'audit', path: '/audit' },
        { name: 'cli-login', path: '/cli/login' },
        { name: 'cli-login-invalid', path: '/cli/login?code=NOPE-NOPE' },
        { name: 'tofu-login-invalid', path: '/oauth/authorize' },
        { name: 'not-found', path: '/jobs/00000000-0000-4000-8000-000000000000' },
      );
      if (OPA) {
        const policy = await user.createPolicy({ name: 'sizes', enforcement: 'mandatory', module: POLICY });
        pages.push({ name: 'policy', path: `/policies/${policy.id}` });
      }
    });

    afterAll(async () => {
      for (const context of contexts) await context.close();
      await browser?.close();
      await server?.close();
    });

    it('axe-core finds no serious or critical violation on any page', async () => {
      const found: string[] = [];
      const visit = async (name: string, page: Page) => {
        for (const line of await seriousViolations(page)) found.push(`${name}: ${line}`);
      };
      const page = await signedInPage();
      for (const { name, path } of pages) {
        await page.goto(`${web}${path}`);
        await visit(name, page);
      }
      await visitRefused(page, (name) => visit(name, page));
      const signedOut = await signedOutPage();
      await visitSignedOut(signedOut, (name) => visit(name, signedOut));
      expect(found).toEqual([]);
      expect(scriptErrors).toEqual([]);
      if (SAVE_SCREENSHOTS) await saveScreenshots();
    });

    it('on a phone no page scrolls sideways, the header keeps every link on screen and axe-core finds nothing serious', async () => {
      const found: string[] = [];
      const check = async (name: string, page: Page) => {
        const layout = await phoneLayout(page);
        if (layout.overflow > 0) {
          found.push(`${name}: the page is ${layout.overflow}px wider than the window (${layout.culprits.join('; ')})`);
        }
        if (layout.headerOverflow > 0) found.push(`${name}: the header is ${layout.headerOverflow}px too wide`);
        if (layout.linksOffScreen.length > 0) found.push(`${name}: off screen: ${layout.linksOffScreen.join(', ')}`);
        // What only a narrow window shows: tables scrolling in their box, a wrapped header.
        for (const line of await seriousViolations(page)) found.push(`${name}: ${line}`);
      };
      const page = await signedInPage(PHONE);
      for (const { name, path } of pages) {
        await page.goto(`${web}${path}`);
        await check(name, page);
      }
      await visitRefused(page, (name) => check(name, page));
      const signedOut = await signedOutPage(PHONE);
      await visitSignedOut(signedOut, (name) => check(name, signedOut));
      expect(found).toEqual([]);
      expect(scriptErrors).toEqual([]);
    });

    it('tabbing from the top skips to the main content, whose first control shows a focus outline', async () => {
      const page = await signedInPage();
      await page.goto(`${web}/tokens`);
      const focused = () =>
        page.evaluate(() => {
          const element = document.activeElement as HTMLElement | null;
          const style = element ? getComputedStyle(element) : null;
          return {
            text: element?.textContent?.trim() ?? '',
            tag: element?.tagName ?? '',
            id: element?.id ?? '',
            inMain: !!element?.closest('main'),
            // The first link, button, form control or scrolling table of the main content.
            first:
              element ===
              [
                ...document.querySelectorAll(
                  'main a[href], main button, main input, main select, main textarea, main [tabindex="0"]',
                ),
              ].find(
                (control) => !(control as HTMLInputElement).disabled && (control as HTMLElement).offsetParent !== null,
              ),
            outline: style ? { style: style.outlineStyle, width: Number.parseFloat(style.outlineWidth) } : null,
          };
        });
      await page.keyboard.press('Tab');
      const skip = await focused();
      expect(skip.text).toBe('Skip to content');
      expect(skip.outline?.style).not.toBe('none');
      expect(skip.outline?.width).toBeGreaterThanOrEqual(2);
      // The link is on screen while it has the focus (it hides only when it has not).
      expect(await page.locator('a.skip-link').isVisible()).toBe(true);

      await page.keyboard.press('Enter');
      await page.keyboard.press('Tab');
      const first = await focused();
      expect(first).toMatchObject({ inMain: true, first: true });
      expect(first.outline?.style).not.toBe('none');
      expect(first.outline?.width).toBeGreaterThanOrEqual(2);
    });

    /** The screenshots of docs/web.md, at desktop and phone width (`TRELLIS_WEB_SCREENSHOTS=1`). */
    async function saveScreenshots() {
      mkdirSync(DOCS_SCREENSHOTS, { recursive: true });
      const shots = [
        'fleet',
        'vineyards',
        'vine-new',
        'vine',
        'plan',
        'state',
        'orgs',
        'tokens',
        'registry-module',
        'audit',
      ];
      const desktop = await signedInPage(DESKTOP);
      const phone = await signedInPage(PHONE);
      for (const name of shots) {
        const entry = pages.find((p) => p.name === name);
        if (!entry) continue;
        await desktop.goto(`${web}${entry.path}`);
        await desktop.screenshot({ path: join(DOCS_SCREENSHOTS, `${name}.png`) });
      }
      for (const name of ['vineyards', 'vine']) {
        const entry = pages.find((p) => p.name === name);
        if (!entry) continue;
        await phone.goto(`${web}${entry.path}`);
        await phone.screenshot({ path: join(DOCS_SCREENSHOTS, `${name}-phone.png`) });
      }
      const signedOut = await signedOutPage(DESKTOP);
      await signedOut.goto(`${web}/signin`);
      await signedOut.screenshot({ path: join(DOCS_SCREENSHOTS, 'signin.png') });
    }
  },
);
