/** `trellis configs create` with OIDC cloud identities (issue 16), real binary and server. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrellisClient } from '@trellis/client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAgent, login, runTrellis, TempHome, TestServer, WEB_URL } from './harness.js';

const GCP_PROVIDER = 'projects/123456/locations/global/workloadIdentityPools/trellis/providers/trellis';
const TENANT = '11111111-2222-4333-8444-555555555555';
const CLIENT = '66666666-7777-4888-8999-aaaaaaaaaaaa';

let server: TestServer;
let home: TempHome;
let agent: TrellisClient;
let dir: string;

beforeAll(async () => {
  server = await new TestServer().start();
  home = new TempHome();
  await login(server, home);
  agent = await fakeAgent(server, home);
  dir = mkdtempSync(join(tmpdir(), 'trellis-cli-oidc-'));
  writeFileSync(join(dir, 'main.tf'), 'output "x" { value = 1 }\n');
  const made = await runTrellis(['vineyards', 'create', 'production'], { env: home.env() });
  expect(made.code, made.stderr).toBe(0);
});
afterAll(async () => {
  await server?.destroy();
  home?.remove();
  rmSync(dir, { recursive: true, force: true });
});

async function trellis(...args: string[]) {
  const result = await runTrellis(args, { env: home.env() });
  if (result.code !== 0) throw new Error(`trellis ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result;
}

const create = (name: string, ...flags: string[]) =>
  trellis('configs', 'create', name, '--vineyard', 'production', '--dir', dir, ...flags);

describe('OIDC cloud identities in the CLI', () => {
  it('--aws-oidc-role: created, shown, and the job token verifies against the served JWKS', async () => {
    const json = JSON.parse(
      (
        await create(
          'aws-oidc',
          '--aws-oidc-role',
          'arn:aws:iam::123456789012:role/deploy',
          '--aws-session-duration',
          '1800',
          '--json',
        )
      ).stdout,
    );
    expect(json.cloud_identity).toMatchObject({
      kind: 'oidc',
      provider: 'aws',
      role_arn: 'arn:aws:iam::123456789012:role/deploy',
      audience: null,
      session_duration: 1800,
    });
    const shown = await trellis('configs', 'show', 'aws-oidc');
    expect(shown.stdout).toMatch(/Cloud identity: +AWS OIDC/);
    expect(shown.stdout).toMatch(/Audience: +sts\.amazonaws\.com\n/);

    await trellis('plan', 'aws-oidc', '--detach');
    const claimed = await agent.claimJob();
    expect(claimed?.identity_token).toEqual(expect.any(String));
    const jwks = createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(claimed?.identity_token as string, jwks, {
      issuer: WEB_URL,
      audience: 'sts.amazonaws.com',
    });
    // Issue 23: ids, never names; the vine's name is in its own claim.
    expect(payload.sub).toBe(
      `vineyard:${claimed?.job.vineyard_id}:vine:${claimed?.job.vine_id}:job_type:PLAN:run:standard`,
    );
    expect(payload).toMatchObject({ trellis_vine_name: 'aws-oidc', trellis_vineyard_name: 'production' });
    await agent.reportStatus(claimed?.job.id as string, { status: 'SUCCESS' });
  });

  it('--gcp-workload-provider and --azure-client-id/--azure-tenant-id', async () => {
    const gcp = JSON.parse(
      (
        await create(
          'gcp-oidc',
          '--gcp-workload-provider',
          GCP_PROVIDER,
          '--gcp-service-account',
          'deploy@acme.iam.gserviceaccount.com',
          '--json',
        )
      ).stdout,
    );
    expect(gcp.cloud_identity).toMatchObject({
      kind: 'oidc',
      provider: 'gcp',
      workload_identity_provider: GCP_PROVIDER,
      service_account_email: 'deploy@acme.iam.gserviceaccount.com',
    });
    const azure = JSON.parse(
      (
        await create(
          'azure-oidc',
          '--azure-client-id',
          CLIENT,
          '--azure-tenant-id',
          TENANT,
          '--oidc-audience',
          'api://custom',
          '--json',
        )
      ).stdout,
    );
    expect(azure.cloud_identity).toMatchObject({
      kind: 'oidc',
      provider: 'azure',
      client_id: CLIENT,
      tenant_id: TENANT,
      audience: 'api://custom',
    });
    const shown = await trellis('configs', 'show', 'azure-oidc');
    expect(shown.stdout).toMatch(/Tenant: +11111111-2222-4333-8444-555555555555\n/);
  });

  it('refuses two identities at once, or half of an Azure one', async () => {
    const both = await runTrellis(
      [
        'configs',
        'create',
        'both',
        '--vineyard',
        'production',
        '--dir',
        dir,
        '--aws-role-arn',
        'arn:aws:iam::123456789012:role/a',
        '--aws-oidc-role',
        'arn:aws:iam::123456789012:role/b',
      ],
      { env: home.env() },
    );
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain('give one cloud identity');
    const half = await runTrellis(
      ['configs', 'create', 'half', '--vineyard', 'production', '--dir', dir, '--azure-client-id', CLIENT],
      { env: home.env() },
    );
    expect(half.code).not.toBe(0);
    expect(half.stderr).toContain('--azure-client-id and --azure-tenant-id go together');
    const bad = await runTrellis(
      ['configs', 'create', 'bad', '--vineyard', 'production', '--dir', dir, '--gcp-workload-provider', 'pool'],
      { env: home.env() },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('[validation_failed]');
  });
});
