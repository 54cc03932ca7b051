/**
 * Every operation of Trellis's API, by operationId (issue 29): the one description the server
 * implements, the OpenAPI document and docs/api.md are generated from, and the clients call.
 * Terraform Cloud's API and the registry protocols are served beside it by their own modules.
 */
import * as oidc from './oidc.js';
import * as stateHistory from './stateHistory.js';
import * as policies from './policies.js';
import * as planReviews from './planReviews.js';
import * as audit from './audit.js';
import * as orgs from './orgs.js';
import * as queue from './queue.js';
import * as repositories from './repositories.js';
import * as vcs from './vcs.js';
import * as drift from './drift.js';
import * as registryModules from './registryModules.js';
import * as registryProviders from './registryProviders.js';
import * as moduleRepositories from './moduleRepositories.js';
import * as registryMirror from './registryMirror.js';
import * as tokens from './tokens.js';
import * as state from './state.js';
import * as vcsFeedback from './vcsFeedback.js';
import * as signIn from './signIn.js';
import * as auth from './auth.js';
import * as releases from './releases.js';
import * as notifications from './notifications.js';
import * as cli from './cli.js';
import * as streams from './streams.js';
import * as vineEdits from './vineEdits.js';
import * as agent from './agent.js';
import * as gitWebhooks from './gitWebhooks.js';

const { WEBHOOK_OPERATIONS: _byProvider, ...webhooks } = gitWebhooks;

export const operations = {
  ...oidc,
  ...stateHistory,
  ...policies,
  ...planReviews,
  ...audit,
  ...orgs,
  ...queue,
  ...repositories,
  ...vcs,
  ...drift,
  ...registryModules,
  ...registryProviders,
  ...moduleRepositories,
  ...registryMirror,
  ...tokens,
  ...state,
  ...vcsFeedback,
  ...signIn,
  ...auth,
  ...releases,
  ...notifications,
  ...cli,
  ...streams,
  ...vineEdits,
  ...agent,
  ...webhooks,
};

export { WEBHOOK_OPERATIONS } from './gitWebhooks.js';
