/**
 * `@trellis/core/agent`: the few values of the core the agent runs with (the limits of what it
 * reports, the git source rules, the features it announces), without the use cases, ports and
 * everything else the package root loads (issue 31: some 190 modules an agent never runs).
 * Types still come from `@trellis/core` (erased at run time).
 */
export { AGENT_FEATURES, type AgentFeature } from './domain/agentFeatures.js';
export { gitSourceIssues } from './domain/gitSource.js';
export {
  MAX_MODULE_SOURCE_LENGTH,
  MAX_MODULE_VERSION_LENGTH,
  MAX_REPORTED_MODULES,
  MAX_RESOURCE_CHANGES,
} from './domain/jobResults.js';
export {
  MAX_ATTRIBUTE_CHANGES,
  MAX_PLAN_CHANGE_OUTPUTS,
  MAX_PLAN_CHANGE_RESOURCES,
  MAX_PLAN_CHANGES_BYTES,
  MAX_PLAN_PATH_CHARS,
  MAX_PLAN_VALUE_CHARS,
  PLAN_CHANGES_FORMAT_VERSION,
} from './domain/planChanges.js';
