import type { CreateConfigurationInput } from '@trellis/client';
import { Option, UsageError } from 'clipanion';
import * as t from 'typanion';
import { TrellisCommand } from '../TrellisCommand.js';

/**
 * The cloud identity flags of `configs create` and `configs update`: an IAM role the agent
 * assumes, or OIDC federation with one cloud (at most one of them).
 */
export abstract class CloudIdentityCommand extends TrellisCommand {
  roleArn = Option.String('--aws-role-arn', { description: 'IAM role the agent assumes for this configuration' });
  externalId = Option.String('--aws-external-id', { description: 'External id for the role (default: generated)' });
  awsOidcRole = Option.String('--aws-oidc-role', {
    description: "IAM role assumed with the job's OIDC token (AssumeRoleWithWebIdentity)",
  });
  awsSessionDuration = Option.String('--aws-session-duration', {
    description: 'Seconds of the STS session with --aws-oidc-role (900 to 43200)',
    validator: t.isNumber(),
  });
  gcpProvider = Option.String('--gcp-workload-provider', {
    description:
      'Google Cloud workload identity provider (projects/N/locations/global/workloadIdentityPools/P/providers/Q)',
  });
  gcpServiceAccount = Option.String('--gcp-service-account', {
    description: 'Service account impersonated with --gcp-workload-provider',
  });
  azureClientId = Option.String('--azure-client-id', {
    description: 'Azure app (client) id federated with the job token',
  });
  azureTenantId = Option.String('--azure-tenant-id', { description: 'Azure tenant id (with --azure-client-id)' });
  audience = Option.String('--oidc-audience', {
    description: "The job token's aud (default: sts.amazonaws.com, the GCP provider, api://AzureADTokenExchange)",
  });

  /** At most one kind of identity: an assumed role, or OIDC with one cloud. */
  protected cloudIdentity(): Pick<CreateConfigurationInput, 'cloud_identity'> {
    const chosen = [
      this.roleArn !== undefined,
      this.awsOidcRole !== undefined,
      this.gcpProvider !== undefined,
      this.azureClientId !== undefined || this.azureTenantId !== undefined,
    ].filter(Boolean).length;
    if (chosen > 1) {
      throw new UsageError(
        'give one cloud identity: --aws-role-arn, --aws-oidc-role, --gcp-workload-provider or --azure-client-id with --azure-tenant-id',
      );
    }
    const audience = this.audience !== undefined ? { audience: this.audience } : {};
    if (this.audience !== undefined && (this.roleArn !== undefined || chosen === 0)) {
      throw new UsageError('--oidc-audience goes with --aws-oidc-role, --gcp-workload-provider or --azure-client-id');
    }
    if (this.awsSessionDuration !== undefined && this.awsOidcRole === undefined) {
      throw new UsageError('--aws-session-duration needs --aws-oidc-role');
    }
    if (this.gcpServiceAccount !== undefined && this.gcpProvider === undefined) {
      throw new UsageError('--gcp-service-account needs --gcp-workload-provider');
    }
    if (this.roleArn !== undefined) {
      return {
        cloud_identity: {
          provider: 'aws',
          role_arn: this.roleArn,
          ...(this.externalId ? { external_id: this.externalId } : {}),
        },
      };
    }
    if (this.awsOidcRole !== undefined) {
      return {
        cloud_identity: {
          kind: 'oidc',
          provider: 'aws',
          role_arn: this.awsOidcRole,
          ...(this.awsSessionDuration !== undefined ? { session_duration: this.awsSessionDuration } : {}),
          ...audience,
        },
      };
    }
    if (this.gcpProvider !== undefined) {
      return {
        cloud_identity: {
          kind: 'oidc',
          provider: 'gcp',
          workload_identity_provider: this.gcpProvider,
          ...(this.gcpServiceAccount !== undefined ? { service_account_email: this.gcpServiceAccount } : {}),
          ...audience,
        },
      };
    }
    if (this.azureClientId !== undefined || this.azureTenantId !== undefined) {
      if (this.azureClientId === undefined || this.azureTenantId === undefined) {
        throw new UsageError('--azure-client-id and --azure-tenant-id go together');
      }
      return {
        cloud_identity: {
          kind: 'oidc',
          provider: 'azure',
          client_id: this.azureClientId,
          tenant_id: this.azureTenantId,
          ...audience,
        },
      };
    }
    return {};
  }
}
