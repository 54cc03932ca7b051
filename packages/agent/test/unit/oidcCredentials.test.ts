import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withOidcCredentials } from '../../src/cloud/oidc.js';

const JOB_ID = '0b7c3d1e-5f6a-4b8c-9d0e-1f2a3b4c5d6e';
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ0ZXN0In0.signature';
const GCP_PROVIDER = 'projects/123456/locations/global/workloadIdentityPools/trellis/providers/trellis';

let dir: string;
let files: { tokenFile: string; gcpCredentialsFile: string };
const HOST = {
  PATH: '/usr/bin',
  AWS_ACCESS_KEY_ID: 'AKIAHOST',
  AWS_SECRET_ACCESS_KEY: 'host-secret',
  AWS_PROFILE: 'host',
  GOOGLE_CREDENTIALS: '{"type":"service_account"}',
  ARM_CLIENT_SECRET: 'azure-secret',
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-oidc-'));
  files = { tokenFile: join(dir, 'identity-token'), gcpCredentialsFile: join(dir, 'gcp-credentials.json') };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const mode = (path: string) => statSync(path).mode & 0o777;

describe('the engine environment of an OIDC identity', () => {
  it('AWS: the token in a 0600 file, the web identity variables, no host credentials', () => {
    const env = withOidcCredentials(
      HOST,
      {
        kind: 'oidc',
        provider: 'aws',
        role_arn: 'arn:aws:iam::123456789012:role/r',
        audience: null,
        session_duration: null,
      },
      TOKEN,
      files,
      JOB_ID,
    );
    expect(readFileSync(files.tokenFile, 'utf8')).toBe(TOKEN);
    expect(mode(files.tokenFile)).toBe(0o600);
    expect(env).toEqual({
      PATH: '/usr/bin',
      GOOGLE_CREDENTIALS: HOST.GOOGLE_CREDENTIALS,
      ARM_CLIENT_SECRET: HOST.ARM_CLIENT_SECRET,
      AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/r',
      AWS_WEB_IDENTITY_TOKEN_FILE: files.tokenFile,
      AWS_ROLE_SESSION_NAME: `trellis-job-${JOB_ID}`,
    });
  });

  it('Google Cloud: an external_account file of the documented shape whose credential source is the token file', () => {
    const env = withOidcCredentials(
      HOST,
      {
        kind: 'oidc',
        provider: 'gcp',
        workload_identity_provider: GCP_PROVIDER,
        service_account_email: 'deployer@project.iam.gserviceaccount.com',
        audience: null,
      },
      TOKEN,
      files,
      JOB_ID,
    );
    expect(env.GOOGLE_APPLICATION_CREDENTIALS).toBe(files.gcpCredentialsFile);
    expect(env.GOOGLE_CREDENTIALS).toBeUndefined();
    expect(mode(files.gcpCredentialsFile)).toBe(0o600);
    // The format `gcloud iam workload-identity-pools create-cred-config --credential-source-file` writes.
    expect(JSON.parse(readFileSync(files.gcpCredentialsFile, 'utf8'))).toEqual({
      type: 'external_account',
      audience: `//iam.googleapis.com/${GCP_PROVIDER}`,
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: 'https://sts.googleapis.com/v1/token',
      service_account_impersonation_url:
        'https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/deployer@project.iam.gserviceaccount.com:generateAccessToken',
      credential_source: { file: files.tokenFile, format: { type: 'text' } },
    });
    expect(readFileSync(files.tokenFile, 'utf8')).toBe(TOKEN);
  });

  it('Google Cloud without a service account: direct resource access, no impersonation URL', () => {
    withOidcCredentials(
      HOST,
      {
        kind: 'oidc',
        provider: 'gcp',
        workload_identity_provider: GCP_PROVIDER,
        service_account_email: null,
        audience: null,
      },
      TOKEN,
      files,
      JOB_ID,
    );
    expect(JSON.parse(readFileSync(files.gcpCredentialsFile, 'utf8'))).not.toHaveProperty(
      'service_account_impersonation_url',
    );
  });

  it("Azure: the azurerm provider's OIDC variables with the token file", () => {
    const env = withOidcCredentials(
      HOST,
      {
        kind: 'oidc',
        provider: 'azure',
        tenant_id: '11111111-2222-4333-8444-555555555555',
        client_id: '66666666-7777-4888-8999-aaaaaaaaaaaa',
        audience: null,
      },
      TOKEN,
      files,
      JOB_ID,
    );
    expect(env).toMatchObject({
      ARM_USE_OIDC: 'true',
      ARM_OIDC_TOKEN_FILE_PATH: files.tokenFile,
      ARM_CLIENT_ID: '66666666-7777-4888-8999-aaaaaaaaaaaa',
      ARM_TENANT_ID: '11111111-2222-4333-8444-555555555555',
    });
    expect(env.ARM_CLIENT_SECRET).toBeUndefined();
    expect(mode(files.tokenFile)).toBe(0o600);
  });
});
