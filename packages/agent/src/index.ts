export {
  type AssumeRole,
  type AwsCredentials,
  sessionNameFor,
  stsAssumeRole,
  withAwsCredentials,
} from './cloud/assumeRole.js';
export { runAgentCli } from './cli/main.js';
export { type AgentCredentials, CredentialsFile, defaultCredentialsPath } from './config/CredentialsFile.js';
export { ConfigError, type RunConfig, resolveRunConfig } from './config/runConfig.js';
export { Agent, type AgentOptions, type AgentResult, type ShutdownMode } from './daemon/Agent.js';
export { Backoff, isTransient } from '@trellis/client';
export { Engine, resolveEngineBin } from './engine/Engine.js';
export { type EngineExit, EngineProcess } from './engine/EngineProcess.js';
export { type DeployMetadata, parseDeployMetadata } from './job/deployMetadata.js';
export {
  MAX_RESOURCE_CHANGES,
  outputsMetadata,
  type PlanSummary,
  type ResourceChanges,
  resourceChanges,
  summarizePlan,
} from './job/executionMetadata.js';
export { type JobOutcome, JobRunner, type RunnerDeps, type RunnerSettings } from './job/JobRunner.js';
export { BACKEND_FILE, declaresBackend } from './job/stateBackend.js';
export { AgentLogger } from './logging/AgentLogger.js';
export { JobLog, type OutputSink } from './logs/JobLog.js';
export { type LogApi, LogShipper } from './logs/LogShipper.js';
export { REDACTED, SecretSet, StreamRedactor } from './logs/Redactor.js';
export { AGENT_VERSION } from './version.js';
