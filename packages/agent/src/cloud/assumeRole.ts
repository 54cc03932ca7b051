import type { CloudIdentitySettings } from '@trellis/core';
import { JobFailure } from '../job/errors.js';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date | null;
}

/** An identity the agent assumes itself with STS AssumeRole (kind `assume_role`). */
export type CloudIdentityRef = Omit<Extract<CloudIdentitySettings, { kind: 'assume_role' }>, 'kind'> & {
  kind?: 'assume_role';
};

export type AssumeRole = (identity: CloudIdentityRef, jobId: string) => Promise<AwsCredentials>;

/** `trellis-job-<id>`: names the job in CloudTrail; at most 64 characters of `[\w+=,.@-]`. */
export function sessionNameFor(jobId: string): string {
  return `trellis-job-${jobId}`.replace(/[^\w+=,.@-]/g, '-').slice(0, 64);
}

/**
 * STS `AssumeRole` with the job's role and external id, signed with whatever credentials the host
 * has (environment, profile, instance or container role: the SDK's default chain). The SDK honours
 * `AWS_ENDPOINT_URL_STS` and `AWS_REGION`; without a region the global endpoint's us-east-1 is used.
 * The SDK is loaded by the first job that assumes a role, not at start (issue 31: an agent that
 * never does keeps none of it in memory).
 */
export function stsAssumeRole(options: { durationSeconds?: number } = {}): AssumeRole {
  return async (identity, jobId) => {
    if (identity.provider !== 'aws')
      throw new JobFailure(`cloud identity provider ${identity.provider} is not supported`);
    const { AssumeRoleCommand, STSClient } = await import('@aws-sdk/client-sts');
    const client = new STSClient({ region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1' });
    try {
      const answer = await client.send(
        new AssumeRoleCommand({
          RoleArn: identity.role_arn,
          ExternalId: identity.external_id,
          RoleSessionName: sessionNameFor(jobId),
          DurationSeconds: options.durationSeconds ?? 3600,
        }),
      );
      const credentials = answer.Credentials;
      if (!credentials?.AccessKeyId || !credentials.SecretAccessKey || !credentials.SessionToken) {
        throw new JobFailure(`STS AssumeRole of ${identity.role_arn} returned no credentials`);
      }
      return {
        accessKeyId: credentials.AccessKeyId,
        secretAccessKey: credentials.SecretAccessKey,
        sessionToken: credentials.SessionToken,
        expiration: credentials.Expiration ?? null,
      };
    } catch (error) {
      if (error instanceof JobFailure) throw error;
      const reason = (error as { name?: string; message?: string }).message ?? String(error);
      throw new JobFailure(`could not assume the role ${identity.role_arn}: ${reason}`);
    } finally {
      client.destroy();
    }
  };
}

/** Host variables that would compete with the assumed credentials in the engine's environment. */
const HOST_AWS_CREDENTIALS = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_SECURITY_TOKEN',
  'AWS_PROFILE',
  'AWS_DEFAULT_PROFILE',
  'AWS_ROLE_ARN',
  'AWS_ROLE_SESSION_NAME',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN',
];

/** The engine's environment with the assumed credentials and nothing of the host's own. */
export function withAwsCredentials(env: NodeJS.ProcessEnv, credentials: AwsCredentials): NodeJS.ProcessEnv {
  const next = { ...env };
  for (const name of HOST_AWS_CREDENTIALS) delete next[name];
  next.AWS_ACCESS_KEY_ID = credentials.accessKeyId;
  next.AWS_SECRET_ACCESS_KEY = credentials.secretAccessKey;
  next.AWS_SESSION_TOKEN = credentials.sessionToken;
  return next;
}
