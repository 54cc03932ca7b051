import { MemoryConfigurationVersionStore } from './MemoryConfigurationVersionStore.js';
import type { Stores } from '@trellis/core';
import type { MemoryTransaction } from '../MemoryTransaction.js';
import { MemoryApiTokenStore } from './MemoryApiTokenStore.js';
import { MemoryAuditStore } from './MemoryAuditStore.js';
import { MemoryCliLoginStore } from './MemoryCliLoginStore.js';
import { MemoryCloudIdentityStore } from './MemoryCloudIdentityStore.js';
import { MemoryIdentityStore } from './MemoryIdentityStore.js';
import { MemoryJobStore } from './MemoryJobStore.js';
import { MemoryLogStore } from './MemoryLogStore.js';
import { MemoryNotificationStore } from './MemoryNotificationStore.js';
import { MemoryMirrorStore } from './MemoryMirrorStore.js';
import { MemoryOutboxStore } from './MemoryOutboxStore.js';
import { MemoryOrgStore } from './MemoryOrgStore.js';
import { MemoryPolicyStore } from './MemoryPolicyStore.js';
import { MemoryPlanArtifactStore } from './MemoryPlanArtifactStore.js';
import { MemoryRefreshTokenStore } from './MemoryRefreshTokenStore.js';
import { MemoryReleaseStore } from './MemoryReleaseStore.js';
import { MemoryTfeLoginCodeStore } from './MemoryTfeLoginCodeStore.js';
import { MemoryModuleRepositoryStore } from './MemoryModuleRepositoryStore.js';
import { MemoryTfeRunStore } from './MemoryTfeRunStore.js';
import { MemoryRegistryModuleStore } from './MemoryRegistryModuleStore.js';
import { MemoryRegistryProviderStore } from './MemoryRegistryProviderStore.js';
import { MemorySignInLinkStore } from './MemorySignInLinkStore.js';
import { MemorySigningKeyStore } from './MemorySigningKeyStore.js';
import { MemoryStateStore } from './MemoryStateStore.js';
import { MemoryUserStore } from './MemoryUserStore.js';
import { MemoryVcsConnectionStore } from './MemoryVcsConnectionStore.js';
import { MemoryVcsFeedbackStore } from './MemoryVcsFeedbackStore.js';
import { MemoryVineStore } from './MemoryVineStore.js';
import { MemoryVineyardStore } from './MemoryVineyardStore.js';
import { MemoryWorkerStore } from './MemoryWorkerStore.js';

export {
  MemoryApiTokenStore,
  MemoryAuditStore,
  MemoryCliLoginStore,
  MemoryCloudIdentityStore,
  MemoryIdentityStore,
  MemoryJobStore,
  MemoryLogStore,
  MemoryNotificationStore,
  MemoryOutboxStore,
  MemoryOrgStore,
  MemoryPolicyStore,
  MemoryPlanArtifactStore,
  MemoryRefreshTokenStore,
  MemoryReleaseStore,
  MemorySignInLinkStore,
  MemorySigningKeyStore,
  MemoryStateStore,
  MemoryUserStore,
  MemoryVcsConnectionStore,
  MemoryVineStore,
  MemoryVineyardStore,
  MemoryWorkerStore,
};

/** Every store, bound to one transaction. */
export function memoryStores(tx: MemoryTransaction): Stores {
  return {
    users: new MemoryUserStore(tx),
    identities: new MemoryIdentityStore(tx),
    cliLogins: new MemoryCliLoginStore(tx),
    refreshTokens: new MemoryRefreshTokenStore(tx),
    vineyards: new MemoryVineyardStore(tx),
    vines: new MemoryVineStore(tx),
    cloudIdentities: new MemoryCloudIdentityStore(tx),
    jobs: new MemoryJobStore(tx),
    logs: new MemoryLogStore(tx),
    workers: new MemoryWorkerStore(tx),
    releases: new MemoryReleaseStore(tx),
    planArtifacts: new MemoryPlanArtifactStore(tx),
    configurationVersions: new MemoryConfigurationVersionStore(tx),
    tfeRuns: new MemoryTfeRunStore(tx),
    registryModules: new MemoryRegistryModuleStore(tx),
    states: new MemoryStateStore(tx),
    apiTokens: new MemoryApiTokenStore(tx),
    orgs: new MemoryOrgStore(tx),
    notifications: new MemoryNotificationStore(tx),
    audit: new MemoryAuditStore(tx),
    policies: new MemoryPolicyStore(tx),
    vcs: new MemoryVcsConnectionStore(tx),
    moduleRepositories: new MemoryModuleRepositoryStore(tx),
    signingKeys: new MemorySigningKeyStore(tx),
    tfeLoginCodes: new MemoryTfeLoginCodeStore(tx),
    signInLinks: new MemorySignInLinkStore(tx),
    registryProviders: new MemoryRegistryProviderStore(tx),
    vcsFeedback: new MemoryVcsFeedbackStore(tx),
    outbox: new MemoryOutboxStore(tx),
    mirror: new MemoryMirrorStore(tx),
  };
}
