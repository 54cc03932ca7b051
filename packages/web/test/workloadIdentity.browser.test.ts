/**
 * Cloud identities on the vine page (issue 16), in Chromium against a real control plane: an
 * assumed AWS role and OIDC federation with AWS, Google Cloud and Azure each say what they are.
 */
import type { TrellisClient } from '@trellis/client';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, findChromium, TestBrowser } from './support/browser.js';
import { BOOTSTRAP_TOKEN, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the workload identity pages suite');
const GCP_PROVIDER = 'projects/123456/locations/global/workloadIdentityPools/trellis/providers/trellis';

describe.skipIf(!chromiumPath)('cloud identities on the vine page', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let server: WebServer;
  let browser: TestBrowser;
  let user: TrellisClient;
  let vineyardId: string;
  const contexts: BrowserContext[] = [];

  async function signedInPage(): Promise<Page> {
    const { context, page } = await browser.context();
    contexts.push(context);
    await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
    return page;
  }

  async function identityShown(name: string, cloudIdentity?: Record<string, unknown>): Promise<string> {
    const vine = await user.createConfiguration({
      name,
      vineyard_id: vineyardId,
      source: { type: 'inline', files: { 'main.tf': '' } },
      ...(cloudIdentity ? { cloud_identity: cloudIdentity as never } : {}),
    });
    const page = await signedInPage();
    await page.goto(`${server.url}/configurations/${vine.id}`);
    const row = page.locator('dt', { hasText: 'Cloud identity' }).locator('xpath=following-sibling::dd[1]');
    return ((await row.textContent()) ?? '').trim();
  }

  beforeAll(async () => {
    server = await new WebServer().start();
    browser = await TestBrowser.launch(chromiumPath as string);
    user = await server.userClient();
    vineyardId = (await user.createVineyard('identities')).id;
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.stop();
  });

  it('names the kind, the cloud and its settings', async () => {
    expect(await identityShown('assumed', { role_arn: 'arn:aws:iam::123456789012:role/a' })).toBe(
      'AWS role arn:aws:iam::123456789012:role/a (assumed with an external id)',
    );
    expect(
      await identityShown('aws-oidc', {
        kind: 'oidc',
        role_arn: 'arn:aws:iam::123456789012:role/deploy',
        audience: 'custom-aud',
      }),
    ).toBe('OIDC: AWS role arn:aws:iam::123456789012:role/deploy, audience custom-aud');
    expect(
      await identityShown('gcp-oidc', {
        kind: 'oidc',
        provider: 'gcp',
        workload_identity_provider: GCP_PROVIDER,
        service_account_email: 'deploy@acme.iam.gserviceaccount.com',
      }),
    ).toBe(`OIDC: Google Cloud provider ${GCP_PROVIDER}, service account deploy@acme.iam.gserviceaccount.com`);
    expect(
      await identityShown('azure-oidc', {
        kind: 'oidc',
        provider: 'azure',
        tenant_id: '11111111-2222-4333-8444-555555555555',
        client_id: '66666666-7777-4888-8999-aaaaaaaaaaaa',
      }),
    ).toBe('OIDC: Azure client 66666666-7777-4888-8999-aaaaaaaaaaaa in tenant 11111111-2222-4333-8444-555555555555');
    expect(await identityShown('none')).toBe('none');
  });

  it('shows the issuer and the subject a trust policy names for DEPLOY jobs', async () => {
    const vine = await user.createConfiguration({
      name: 'network',
      vineyard_id: vineyardId,
      source: { type: 'inline', files: { 'main.tf': '' } },
      cloud_identity: { kind: 'oidc', provider: 'aws', role_arn: 'arn:aws:iam::123456789012:role/deploy' },
    });
    const page = await signedInPage();
    await page.goto(`${server.url}/configurations/${vine.id}`);
    const row = (label: string) =>
      page.locator('dt', { hasText: label }).locator('xpath=following-sibling::dd[1]').textContent();
    expect(await row('Token issuer')).toBe(
      ((await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as { issuer: string }).issuer,
    );
    // Issue 23: ids, never names; plans and speculative plans have their own.
    const ids = `vineyard:${vine.vineyard_id}:vine:${vine.id}`;
    expect(await row('DEPLOY token subject')).toBe(`${ids}:job_type:DEPLOY:run:standard`);
    expect(await row('PLAN token subject')).toBe(`${ids}:job_type:PLAN:run:standard`);
    expect(await row('Speculative PLAN subject')).toBe(
      `${ids}:job_type:PLAN:run:speculative (drift checks, pull requests)`,
    );
  });
});
