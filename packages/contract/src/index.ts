/**
 * The API contract (issue 11 §1): every request and response schema, written once. `http`
 * validates requests with them and generates the OpenAPI document from them; `client` derives
 * its types from them (`z.infer`/`z.input`) and its tests check real answers against them.
 * Enums, limits and formats come from core's constants.
 */
export * from './agent.js';
export * from './jobResults.js';
export * from './planChanges.js';
export * from './audit.js';
export * from './auth.js';
export * from './cli.js';
export * from './common.js';
export * from './gitWebhooks.js';
export * from './orgs.js';
export * from './records.js';
export * from './releases.js';
export * from './state.js';
export * from './tokens.js';
export * from './notifications.js';
export * from './policies.js';
export * from './registryModules.js';
export * from './vcs.js';
export * from './oidc.js';
export type * from './types.js';
export * from './vcsFeedback.js';
export * from './tfeState.js';
export * from './vineEdits.js';
export * from './registryMirror.js';
export * from './registryProviders.js';
export * from './moduleRepositories.js';
export * from './queue.js';
