/**
 * The policies page and a plan's policy checks in Chromium against a real control plane that
 * compiles modules with the real OPA binary: reached from the navigation, a module that does not
 * compile is refused with the engine's message (and the form keeps it), a good one is created,
 * a new version is saved and both versions are shown; the job page of a plan shows each policy's
 * result and messages.
 */
import { requirePeer } from '@trellis/testkit';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, clickAndFollow, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { BOOTSTRAP_TOKEN, vineyardWithVine, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the policies page suite');
const OPA = requirePeer('opa', 'the policies page suite');

const MODULE = `package trellis.sizes

deny contains msg if {
  some rc in input.resource_changes
  rc.type == "aws_instance"
  not rc.change.after.instance_type in {"t3.micro", "t3.small"}
  msg := sprintf("%s: instance type %s is not allowed", [rc.address, rc.change.after.instance_type])
}
`;

describe.skipIf(!chromiumPath || !OPA)('the policies page in Chromium', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let server: WebServer;
  let browser: TestBrowser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    server = await new WebServer({ env: { TRELLIS_OPA_BIN: OPA as string } }).start();
    browser = await TestBrowser.launch(chromiumPath as string);
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.close();
  });

  it('refuses a module that does not compile, creates one, saves a new version and shows both', async () => {
    const { context, page, errors } = await browser.context();
    contexts.push(context);
    await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
    await page.goto(`${server.url}/vineyards`);
    const url = await clickAndFollow(page, 'nav a[href$="/policies"]');
    expect(url.pathname).toBe('/policies');
    await page.waitForSelector('#no-policies');

    await page.fill('#policy-name', 'sizes');
    await page.selectOption('#policy-enforcement', 'advisory');
    const broken = 'package broken\n\ndeny contains msg if {\n  msg :=\n}\n';
    await page.fill('#policy-module', broken);
    await page.click('#create-policy');
    await page.waitForSelector('#policy-error');
    expect(await page.textContent('#policy-error')).toContain('rego_parse_error');
    expect(await page.inputValue('#policy-module')).toBe(broken);
    expect(await page.inputValue('#policy-enforcement')).toBe('advisory');

    await page.fill('#policy-module', MODULE);
    await page.click('#create-policy');
    await page.waitForSelector('#version-1');
    expect(await page.textContent('h1')).toContain('Policy sizes');
    expect(await page.textContent('#policy-enforcement-value')).toBe('advisory');

    await page.selectOption('#policy-enforcement', 'mandatory');
    await page.fill('#policy-module', MODULE.replace('"t3.small"', '"t3.small", "t3.medium"'));
    await page.click('#update-policy');
    await page.waitForSelector('#version-2');
    expect(await page.textContent('#policy-enforcement-value')).toBe('mandatory');
    expect(await page.textContent('#version-1 pre')).toBe(MODULE);
    expect(await page.textContent('#version-2 pre')).toContain('"t3.medium"');
    await screenshot(page, 'policy-versions');

    await page.goto(`${server.url}/policies`);
    expect(await page.locator('table.policies tbody tr').first().textContent()).toMatch(/sizes\s*mandatory\s*2/);
    expect(errors).toEqual([]);
  });

  it("shows each policy's result and messages on the job page of a plan", async () => {
    const client = await server.userClient();
    const { vine } = await vineyardWithVine(client, 'checked');
    const agent = await server.agentClient(client, 'policy-agent');
    const policy = await client.createPolicy({ name: 'no-big', enforcement: 'mandatory', module: MODULE });
    const job = await client.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const claimed = await agent.claimJob();
    expect(claimed?.policies.map((p) => p.name)).toContain('no-big');
    await agent.reportStatus(job.id, {
      status: 'SUCCESS',
      execution_metadata: {
        plan_summary: { add: 1, change: 0, destroy: 0 },
        policy_results: [
          {
            policy_id: policy.id,
            version: 1,
            name: 'no-big',
            enforcement: 'mandatory',
            passed: false,
            messages: ['aws_instance.web: instance type m5.4xlarge is not allowed'],
          },
          {
            policy_id: policy.id,
            version: 1,
            name: 'tags',
            enforcement: 'advisory',
            passed: false,
            messages: ['<b>no tags</b>'],
          },
        ],
      },
    });

    const { context, page, errors } = await browser.context();
    contexts.push(context);
    await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
    await page.goto(`${server.url}/jobs/${job.id}`);
    await page.waitForSelector('#policy-results');
    const rows = page.locator('#policy-results tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).textContent()).toMatch(
      /no-big\s*v1\s*mandatory\s*failed\s*aws_instance\.web: instance type m5\.4xlarge is not allowed/,
    );
    expect(await rows.nth(1).textContent()).toMatch(/tags\s*v1\s*advisory\s*warning\s*<b>no tags<\/b>/);
    expect(await page.getAttribute('#policy-results tbody tr >> nth=0', 'data-passed')).toBe('false');
    await screenshot(page, 'plan-policy-results');
    expect(errors).toEqual([]);
  });
});
