/**
 * The registry pages (issue 28) in Chromium against a real control plane: reached from the
 * navigation, a namespace's modules, and a module's versions with the README, inputs and outputs
 * read from each version's own tarball, the module source to copy, its git repository, and the
 * vines whose last plan installed it (reported by their agent through the API).
 */
import type { TrellisClient } from '@trellis/client';
import { personalNamespace, type VineView } from '@trellis/core';
import { chunksOf, tarGz } from '@trellis/testkit';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, clickAndFollow, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { runJob } from './support/seed.js';
import { ADMIN_EMAIL, BOOTSTRAP_TOKEN, vineyardWithVine, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the registry page suite');

const V1_VARIABLES = 'variable "name" {\n  description = "The VPC\'s name"\n  type        = string\n}\n';
const V2_VARIABLES = `${V1_VARIABLES}
variable "cidr_block" {
  description = "The VPC's CIDR block"
  type        = string
  default     = "10.0.0.0/16"
}

variable "api_key" {
  type      = string
  sensitive = true
  default   = "do-not-show-me"
}
`;
const OUTPUTS = 'output "vpc_id" {\n  description = "The id of the VPC"\n  value       = "vpc"\n}\n';

describe.skipIf(!chromiumPath)('the registry pages in Chromium', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let server: WebServer;
  let browser: TestBrowser;
  let namespace: string;
  let user: TrellisClient;
  let network: VineView;
  const contexts: BrowserContext[] = [];

  async function signedInPage(): Promise<{ page: Page; errors: string[] }> {
    const { context, page, errors } = await browser.context();
    contexts.push(context);
    await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
    return { page, errors };
  }

  beforeAll(async () => {
    server = await new WebServer({
      env: { TRELLIS_GITHUB_CLIENT_ID: 'gh-client', TRELLIS_GITHUB_CLIENT_SECRET: 'gh-secret' },
    }).start();
    browser = await TestBrowser.launch(chromiumPath as string);
    const admin = await server.useCases.auth.ensureUser({ email: ADMIN_EMAIL });
    const actor = { userId: admin.id, email: ADMIN_EMAIL };
    namespace = personalNamespace(admin.id);
    const publish = (version: string, files: Record<string, string>) =>
      server.useCases.registryModules.publish(
        actor,
        { namespace, name: 'vpc', system: 'aws', version },
        chunksOf(tarGz(Object.entries(files).map(([path, content]) => ({ path, content })))),
      );
    await publish('1.0.0', { 'variables.tf': V1_VARIABLES, 'outputs.tf': OUTPUTS });
    await publish('1.1.0', {
      'variables.tf': V2_VARIABLES,
      'outputs.tf': OUTPUTS,
      'README.md': '# VPC\n\nA network for <script>alert(1)</script> every team.\n',
    });
    await server.useCases.moduleRepositories.connect(
      actor,
      { namespace, name: 'vpc', system: 'aws' },
      { provider: 'github', repository: 'acme/terraform-aws-vpc', webhook: 'manual' },
    );
    // What agents report after `init`: `network`'s last plan installed 1.1.0; `legacy` used 1.0.0
    // once, but its last plan installs nothing from the registry.
    user = await server.userClient();
    const agent = await server.agentClient(user, 'registry-agent');
    const vpc = (version: string) => ({ source: `trellis.example.com/${namespace}/vpc/aws`, version });
    network = (await vineyardWithVine(user, 'network')).vine;
    const plan = { job_type: 'PLAN' as const, configuration_id: network.id };
    await runJob(user, agent, plan, {
      status: 'SUCCESS',
      artifact: true,
      execution_metadata: { modules: [vpc('1.0.0')] },
    });
    await runJob(user, agent, plan, {
      status: 'SUCCESS',
      artifact: true,
      execution_metadata: { modules: [vpc('1.1.0')] },
    });
    const legacy = (await vineyardWithVine(user, 'legacy')).vine;
    const legacyPlan = { job_type: 'PLAN' as const, configuration_id: legacy.id };
    await runJob(user, agent, legacyPlan, {
      status: 'SUCCESS',
      artifact: true,
      execution_metadata: { modules: [vpc('1.0.0')] },
    });
    await runJob(user, agent, legacyPlan, { status: 'SUCCESS', artifact: true });
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.close();
  });

  it("lists the namespace's modules and shows a module's versions, README, inputs and outputs", async () => {
    const { page, errors } = await signedInPage();
    await page.goto(`${server.url}/vineyards`);
    const registryUrl = await clickAndFollow(page, 'nav a[href$="/registry"]');
    expect(registryUrl.pathname).toBe('/registry');
    expect(await page.textContent('#module-vpc-aws')).toContain('1.1.0');
    await screenshot(page, 'registry-modules');

    const moduleUrl = await clickAndFollow(page, '#module-vpc-aws a');
    expect(moduleUrl.pathname).toBe(`/registry/${namespace}/vpc/aws`);
    expect(await page.textContent('#module-title')).toBe('vpc/aws');
    // The latest version is shown first, with the source to copy.
    expect(await page.textContent('#module-usage')).toContain(`source  = "${moduleUrl.host}/${namespace}/vpc/aws"`);
    expect(await page.textContent('#module-usage')).toContain('version = "1.1.0"');
    const versions = await page.locator('#module-versions tbody tr').allTextContents();
    expect(versions.map((row) => row.trim().split(/\s/)[0])).toEqual(['1.1.0', '1.0.0']);

    expect(await page.textContent('#module-readme pre')).toBe(
      '# VPC\n\nA network for <script>alert(1)</script> every team.\n',
    );
    expect(await page.locator('#module-readme script').count()).toBe(0);
    expect(await page.locator('#module-inputs tbody tr').count()).toBe(3);
    expect(await page.textContent('#input-name')).toContain('required');
    expect(await page.textContent('#input-cidr_block')).toContain('"10.0.0.0/16"');
    expect(await page.textContent('#input-cidr_block')).toContain("The VPC's CIDR block");
    expect(await page.textContent('#input-api_key')).toContain('(sensitive)');
    expect(await page.content()).not.toContain('do-not-show-me');
    expect(await page.textContent('#output-vpc_id')).toContain('The id of the VPC');
    expect(await page.textContent('#module-repository')).toContain('acme/terraform-aws-vpc');
    // Used by: each vine's last plan, linked to the vine.
    const usedBy = await page.locator('#module-used-by tbody tr').allTextContents();
    expect(usedBy.map((row) => row.trim().split(/\s+/).slice(0, 2))).toEqual([['network', '1.1.0']]);
    await screenshot(page, 'registry-module');

    // An older version: its own inputs, and no README.
    const older = await clickAndFollow(page, '#version-1\\.0\\.0 a');
    expect(older.searchParams.get('version')).toBe('1.0.0');
    expect(await page.textContent('#module-usage')).toContain('version = "1.0.0"');
    expect(await page.locator('#module-inputs tbody tr').count()).toBe(1);
    expect(await page.textContent('#module-readme')).toContain('This version has no README.');

    const vineUrl = await clickAndFollow(page, `[data-used-by="${network.id}"] td:first-child a`);
    expect(vineUrl.pathname).toBe(`/configurations/${network.id}`);
    expect(errors).toEqual([]);
  });

  it('answers the same through the API', async () => {
    const usage = await user.moduleUsage({ namespace, name: 'vpc', system: 'AWS' });
    expect(usage).toMatchObject({ namespace, name: 'vpc', system: 'aws' });
    expect(usage.vines.map((used) => [used.vine_id, used.version, used.job_type])).toEqual([
      [network.id, '1.1.0', 'PLAN'],
    ]);
    await expect(user.moduleUsage({ namespace: 'u-000000000000', name: 'vpc', system: 'aws' })).rejects.toMatchObject({
      status: 404,
    });
  });

  it("answers another person's namespace as not found", async () => {
    const { page } = await signedInPage();
    const answer = await page.goto(`${server.url}/registry/u-000000000000/vpc/aws`);
    expect(answer?.status()).toBe(404);
  });
});
