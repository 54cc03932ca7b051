import { describe } from 'vitest';
import { describeApiTokenStoreConformance } from './apiTokens.js';
import { describeAuditStoreConformance } from './audit.js';
import { describeAuthStoreConformance } from './auth.js';
import { describeDeletionConformance } from './deletion.js';
import { describeJobClaimConformance } from './claim.js';
import { describeJobQueueConformance } from './queue.js';
import type { OpenStoreHarness } from './harness.js';
import { describeJobStoreConformance } from './jobs.js';
import { describeLogStoreConformance } from './logs.js';
import { describeNotificationStoreConformance } from './notifications.js';
import { describeOrgMembershipConformance } from './orgMemberships.js';
import { describeOutboxStoreConformance } from './outbox.js';
import { describeOrgStoreConformance } from './orgs.js';
import { describePaginationConformance } from './pagination.js';
import { describePolicyStoreConformance } from './policies.js';
import { describeReleaseAndArtifactStoreConformance } from './releases.js';
import { describeConfigurationVersionStoreConformance } from './configurationVersions.js';
import { describeSignInLinkStoreConformance } from './signInLinks.js';
import { describeSigningKeyStoreConformance } from './signingKeys.js';
import { describeStateStoreConformance } from './states.js';
import { describeUnitOfWorkConformance } from './unitOfWork.js';
import { describeUserStoreConformance } from './users.js';
import { describeVcsConnectionStoreConformance } from './vcs.js';
import { describeModuleRepositoryStoreConformance } from './moduleRepositories.js';
import { describeVcsFeedbackStoreConformance } from './vcsFeedback.js';
import { describeVineyardStoreConformance } from './vineyards.js';
import { describeVineStoreConformance } from './vines.js';
import { describeFleetConformance } from './fleet.js';
import { describeWorkerStoreConformance } from './workers.js';
import { describeTfeRunStoreConformance } from './tfeRuns.js';
import { describeMirrorStoreConformance } from './mirror.js';
import { describeRegistryModuleStoreConformance } from './registryModules.js';
import { describeRegistryProviderStoreConformance } from './registryProviders.js';

export type { OpenStoreHarness, StoreHarness } from './harness.js';
export { newDelivery as newNotificationDelivery, newNotification } from './notifications.js';
export { newPolicy } from './policies.js';
export { newVcsConnection } from './vcs.js';
export { newModuleRepository } from './moduleRepositories.js';
export { newVcsFeedbackItem } from './vcsFeedback.js';
export { newTfeRun } from './tfeRuns.js';
export { newMirrorArchive } from './mirror.js';
export { newRegistryModule, newRegistryModuleVersion } from './registryModules.js';
export { newJob, newUser, newVine, newVineyard, newWorker } from './fixtures.js';

/**
 * The behaviour every implementation of the store ports must show (`UnitOfWork` and every
 * store), as one vitest suite. `open` is called before each test and must return a unit of work
 * on an empty, migrated database of its own; `close` removes it.
 */
export function describeStoreConformance(name: string, open: OpenStoreHarness): void {
  describe(`store conformance: ${name}`, () => {
    describeUnitOfWorkConformance(open);
    describeUserStoreConformance(open);
    describeAuthStoreConformance(open);
    describeVineyardStoreConformance(open);
    describeVineStoreConformance(open);
    describeFleetConformance(open);
    describeDeletionConformance(open);
    describeJobStoreConformance(open);
    describeJobClaimConformance(open);
    describeJobQueueConformance(open);
    describeLogStoreConformance(open);
    describeWorkerStoreConformance(open);
    describeReleaseAndArtifactStoreConformance(open);
    describeConfigurationVersionStoreConformance(open);
    describeStateStoreConformance(open);
    describePaginationConformance(open);
    describeOrgStoreConformance(open);
    describeOrgMembershipConformance(open);
    describeApiTokenStoreConformance(open);
    describeNotificationStoreConformance(open);
    describeAuditStoreConformance(open);
    describePolicyStoreConformance(open);
    describeVcsConnectionStoreConformance(open);
    describeModuleRepositoryStoreConformance(open);
    describeSigningKeyStoreConformance(open);
    describeSignInLinkStoreConformance(open);
    describeVcsFeedbackStoreConformance(open);
    describeTfeRunStoreConformance(open);
    describeRegistryProviderStoreConformance(open);
    describeOutboxStoreConformance(open);
    describeMirrorStoreConformance(open);
    describeRegistryModuleStoreConformance(open);
  });
}
