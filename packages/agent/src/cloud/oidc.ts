import { chmodSync, writeFileSync } from 'node:fs';
import type { CloudIdentitySettings } from '@trellis/core';
import { sessionNameFor } from './assumeRole.js';

export type OidcIdentity = Extract<CloudIdentitySettings, { kind: 'oidc' }>;

/** The audience Google Cloud's STS expects in an `external_account` file: the provider's resource name. */
export function gcpStsAudience(workloadIdentityProvider: string): string {
  return `//iam.googleapis.com/${workloadIdentityProvider}`;
}

/**
 * Google Cloud's credential configuration for workload identity federation from a file-sourced
 * OIDC token (what `gcloud iam workload-identity-pools create-cred-config --credential-source-file`
 * writes): the client libraries and the `google` provider read it from GOOGLE_APPLICATION_CREDENTIALS.
 */
export function gcpExternalAccount(
  identity: Extract<OidcIdentity, { provider: 'gcp' }>,
  tokenFile: string,
): Record<string, unknown> {
  return {
    type: 'external_account',
    audience: gcpStsAudience(identity.workload_identity_provider),
    subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    token_url: 'https://sts.googleapis.com/v1/token',
    ...(identity.service_account_email
      ? {
          service_account_impersonation_url: `https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/${identity.service_account_email}:generateAccessToken`,
        }
      : {}),
    credential_source: { file: tokenFile, format: { type: 'text' } },
  };
}

/** Host variables that would compete with the job's federated credentials in the engine's environment. */
const COMPETING = {
  aws: [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_SECURITY_TOKEN',
    'AWS_PROFILE',
    'AWS_DEFAULT_PROFILE',
    'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
    'AWS_CONTAINER_CREDENTIALS_FULL_URI',
    'AWS_CONTAINER_AUTHORIZATION_TOKEN',
  ],
  gcp: ['GOOGLE_CREDENTIALS', 'GOOGLE_CLOUD_KEYFILE_JSON', 'GCLOUD_KEYFILE_JSON', 'GOOGLE_OAUTH_ACCESS_TOKEN'],
  azure: [
    'ARM_CLIENT_SECRET',
    'ARM_CLIENT_CERTIFICATE_PATH',
    'ARM_USE_MSI',
    'ARM_USE_CLI',
    'ARM_OIDC_TOKEN',
    'ARM_OIDC_REQUEST_TOKEN',
    'ARM_OIDC_REQUEST_URL',
  ],
} as const;

/**
 * Writes the job's token to `tokenFile` (mode 0600, inside the job's workspace, removed with it)
 * and returns the engine's environment with what each cloud's tooling reads (issue 16): AWS's web
 * identity variables (the provider and the `s3` backend honour them), a Google Cloud
 * `external_account` file, Azure's OIDC variables. `write` receives extra files (the GCP config).
 */
export function withOidcCredentials(
  env: NodeJS.ProcessEnv,
  identity: OidcIdentity,
  token: string,
  files: { tokenFile: string; gcpCredentialsFile: string },
  jobId: string,
): NodeJS.ProcessEnv {
  writeSecretFile(files.tokenFile, token);
  const next = { ...env };
  for (const name of COMPETING[identity.provider]) delete next[name];
  switch (identity.provider) {
    case 'aws':
      next.AWS_ROLE_ARN = identity.role_arn;
      next.AWS_WEB_IDENTITY_TOKEN_FILE = files.tokenFile;
      next.AWS_ROLE_SESSION_NAME = sessionNameFor(jobId);
      break;
    case 'gcp':
      writeSecretFile(
        files.gcpCredentialsFile,
        `${JSON.stringify(gcpExternalAccount(identity, files.tokenFile), null, 2)}\n`,
      );
      next.GOOGLE_APPLICATION_CREDENTIALS = files.gcpCredentialsFile;
      break;
    case 'azure':
      next.ARM_USE_OIDC = 'true';
      next.ARM_OIDC_TOKEN_FILE_PATH = files.tokenFile;
      next.ARM_CLIENT_ID = identity.client_id;
      next.ARM_TENANT_ID = identity.tenant_id;
      break;
  }
  return next;
}

function writeSecretFile(path: string, content: string): void {
  writeFileSync(path, content, { mode: 0o600 });
  chmodSync(path, 0o600);
}
