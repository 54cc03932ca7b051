/**
 * Every operation of Trellis's API, by operationId (issue 29): the one description the server
 * implements, the OpenAPI document and docs/api.md are generated from, and the clients call.
 * Terraform Cloud's API and the registry protocols are served beside it by their own modules.
 * Listed feature by feature, each in its own order (what the API reference follows).
 */
import { authOperations } from './auth.js';
import { signInOperations } from './signIn.js';
import { agentOperations } from './agent.js';
import { streamsOperations } from './streams.js';
import { cliOperations } from './cli.js';
import { queueOperations } from './queue.js';
import { vineEditsOperations } from './vineEdits.js';
import { releasesOperations } from './releases.js';
import { stateOperations } from './state.js';
import { stateHistoryOperations } from './stateHistory.js';
import { notificationsOperations } from './notifications.js';
import { policiesOperations } from './policies.js';
import { planReviewsOperations } from './planReviews.js';
import { repositoriesOperations } from './repositories.js';
import { vcsOperations } from './vcs.js';
import { vcsFeedbackOperations } from './vcsFeedback.js';
import { gitWebhooksOperations } from './gitWebhooks.js';
import { driftOperations } from './drift.js';
import { orgsOperations } from './orgs.js';
import { tokensOperations } from './tokens.js';
import { auditOperations } from './audit.js';
import { oidcOperations } from './oidc.js';
import { registryModulesOperations } from './registryModules.js';
import { registryProvidersOperations } from './registryProviders.js';
import { registryMirrorOperations } from './registryMirror.js';
import { moduleRepositoriesOperations } from './moduleRepositories.js';

export const operations = {
  ...authOperations,
  ...signInOperations,
  ...agentOperations,
  ...streamsOperations,
  ...cliOperations,
  ...queueOperations,
  ...vineEditsOperations,
  ...releasesOperations,
  ...stateOperations,
  ...stateHistoryOperations,
  ...notificationsOperations,
  ...policiesOperations,
  ...planReviewsOperations,
  ...repositoriesOperations,
  ...vcsOperations,
  ...vcsFeedbackOperations,
  ...gitWebhooksOperations,
  ...driftOperations,
  ...orgsOperations,
  ...tokensOperations,
  ...auditOperations,
  ...oidcOperations,
  ...registryModulesOperations,
  ...registryProvidersOperations,
  ...registryMirrorOperations,
  ...moduleRepositoriesOperations,
};

export { WEBHOOK_OPERATIONS } from './gitWebhooks.js';
