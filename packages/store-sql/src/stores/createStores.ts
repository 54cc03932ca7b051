import { SqlConfigurationVersionStore } from './SqlConfigurationVersionStore.js';
import type { Stores } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { SqlApiTokenStore } from './SqlApiTokenStore.js';
import { SqlAuditStore } from './SqlAuditStore.js';
import { SqlCliLoginStore } from './SqlCliLoginStore.js';
import { SqlCloudIdentityStore } from './SqlCloudIdentityStore.js';
import { SqlIdentityStore } from './SqlIdentityStore.js';
import { SqlJobStore } from './SqlJobStore.js';
import { SqlLogStore } from './SqlLogStore.js';
import { SqlMirrorStore } from './SqlMirrorStore.js';
import { SqlNotificationStore } from './SqlNotificationStore.js';
import { SqlOutboxStore } from './SqlOutboxStore.js';
import { SqlOrgStore } from './SqlOrgStore.js';
import { SqlPolicyStore } from './SqlPolicyStore.js';
import { SqlRegistryModuleStore } from './SqlRegistryModuleStore.js';
import { SqlPlanArtifactStore } from './SqlPlanArtifactStore.js';
import { SqlRefreshTokenStore } from './SqlRefreshTokenStore.js';
import { SqlReleaseStore } from './SqlReleaseStore.js';
import { SqlTfeLoginCodeStore } from './SqlTfeLoginCodeStore.js';
import { SqlModuleRepositoryStore } from './SqlModuleRepositoryStore.js';
import { SqlTfeRunStore } from './SqlTfeRunStore.js';
import { SqlRegistryProviderStore } from './SqlRegistryProviderStore.js';
import { SqlSignInLinkStore } from './SqlSignInLinkStore.js';
import { SqlSigningKeyStore } from './SqlSigningKeyStore.js';
import { SqlStateStore } from './SqlStateStore.js';
import { SqlUserStore } from './SqlUserStore.js';
import { SqlVcsConnectionStore } from './SqlVcsConnectionStore.js';
import { SqlVcsFeedbackStore } from './SqlVcsFeedbackStore.js';
import { SqlVineStore } from './SqlVineStore.js';
import { SqlVineyardStore } from './SqlVineyardStore.js';
import { SqlWorkerStore } from './SqlWorkerStore.js';

/** Every store, bound to one unit of work's session. */
export function createStores(session: SqlSession): Stores {
  return {
    users: new SqlUserStore(session),
    identities: new SqlIdentityStore(session),
    cliLogins: new SqlCliLoginStore(session),
    refreshTokens: new SqlRefreshTokenStore(session),
    vineyards: new SqlVineyardStore(session),
    vines: new SqlVineStore(session),
    cloudIdentities: new SqlCloudIdentityStore(session),
    jobs: new SqlJobStore(session),
    logs: new SqlLogStore(session),
    workers: new SqlWorkerStore(session),
    releases: new SqlReleaseStore(session),
    planArtifacts: new SqlPlanArtifactStore(session),
    configurationVersions: new SqlConfigurationVersionStore(session),
    tfeRuns: new SqlTfeRunStore(session),
    states: new SqlStateStore(session),
    apiTokens: new SqlApiTokenStore(session),
    orgs: new SqlOrgStore(session),
    notifications: new SqlNotificationStore(session),
    audit: new SqlAuditStore(session),
    policies: new SqlPolicyStore(session),
    vcs: new SqlVcsConnectionStore(session),
    signingKeys: new SqlSigningKeyStore(session),
    tfeLoginCodes: new SqlTfeLoginCodeStore(session),
    moduleRepositories: new SqlModuleRepositoryStore(session),
    signInLinks: new SqlSignInLinkStore(session),
    registryProviders: new SqlRegistryProviderStore(session),
    vcsFeedback: new SqlVcsFeedbackStore(session),
    outbox: new SqlOutboxStore(session),
    mirror: new SqlMirrorStore(session),
    registryModules: new SqlRegistryModuleStore(session),
  };
}
