/** The agent protocol: each operation as data (served by `http/src/routes/agentRoutes.ts`). */
import { MAX_PLAN_CHANGES_BYTES } from '@trellis/core';
import { operation } from '../operation.js';
import {
  AgentJob,
  ArtifactResponse,
  ClaimQuery,
  ClaimResponse,
  ConfigurationVersionParams,
  HeartbeatBody,
  HeartbeatResponse,
  IdParams,
  LogBatchResponse,
  LogBody,
  LogPage,
  LogPostResponse,
  LogQuery,
  MetadataBody,
  PlanChangesSchema,
  RegisterWorkerBody,
  RegistrationResponse,
  StatusBody,
  StatusQuery,
  StatusResponse,
  Worker,
} from '../schemas.js';

export const claimJob = operation({
  method: 'post',
  path: '/api/jobs/claim',
  operationId: 'claimJob',
  summary: 'Claim the next job this agent may run',
  description:
    "Takes the oldest queued job of the agent owner that is assigned to nobody or to this agent, one job at a time per vine; a DEPLOY of a plan keeps its plan's place in the queue, and for 3 seconds after it is queued other agents pass over it when it is offered to the agent that ran its plan (see [agent.md](agent.md#which-agent-takes-a-job)). With `?wait=N` (at most 30) the request waits up to N seconds for a job; a worker may have a few such waits open at once (default 4), and the server a bounded number in all: past either, `429` with code `too_many_long_polls`.",
  tags: ['agent'],
  auth: 'worker',
  query: ClaimQuery,
  responses: {
    200: { description: 'The claimed job', schema: ClaimResponse },
    204: { description: 'No job available' },
  },
});

export const heartbeat = operation({
  method: 'post',
  path: '/api/workers/heartbeat',
  operationId: 'heartbeat',
  summary: 'Tell the control plane this agent is alive',
  description: 'Every 30 s. The answer lists the jobs of this agent that were cancelled, so it can stop them.',
  tags: ['agent'],
  auth: 'worker',
  body: HeartbeatBody,
  responses: { 200: { description: 'Cancelled jobs to stop', schema: HeartbeatResponse } },
});

export const getJobForAgent = operation({
  method: 'get',
  path: '/api/jobs/{id}',
  operationId: 'getJobForAgent',
  summary: 'A job of this agent owner, with its full snapshot',
  tags: ['agent'],
  auth: 'worker',
  params: IdParams,
  responses: { 200: { description: 'The job', schema: AgentJob } },
});

export const reportJobStatus = operation({
  method: 'put',
  path: '/api/jobs/{id}/status',
  operationId: 'reportJobStatus',
  summary: 'Report the status of a claimed job',
  description:
    "Only the agent that claimed the job. `FAILED` sets the vine FAILED with `error_message`; a successful DEPLOY stores its outputs on the vine in the same transaction. With `claim_next`, a report that ends the job also claims the agent's next job, answered as `next_claim`: a DEPLOY queued as its plan ends and offered to the plan's agent starts without a claim of its own (see [agent.md](agent.md#which-agent-takes-a-job)).",
  tags: ['agent'],
  auth: 'worker',
  params: IdParams,
  query: StatusQuery,
  body: StatusBody,
  responses: {
    200: { description: 'The job; with `claim_next`, the next claim too', schema: StatusResponse },
    413: { description: '`metadata_too_large`: the merged execution_metadata would pass its cap' },
  },
});

export const appendJobLog = operation({
  method: 'post',
  path: '/api/jobs/{id}/logs',
  operationId: 'appendJobLog',
  summary: 'Append a log chunk (at most 1 MiB), or a batch of chunks with sequence numbers',
  description:
    'The answer carries the job status: `CANCELLED` tells the agent to stop the engine. A cancelled job takes chunks for the log grace period; a job log is capped in bytes. A batch (`chunks`) is stored in one statement, in `seq` order; a chunk whose `seq` the log holds is skipped, so a retried batch is stored once.',
  tags: ['agent'],
  auth: 'worker',
  params: IdParams,
  body: LogBody,
  bodyLimit: 8 * 1024 * 1024,
  responses: {
    201: {
      description: 'Stored: a chunk (`id`) or a batch (`last_seq`)',
      schema: LogPostResponse.or(LogBatchResponse),
    },
    409: {
      description:
        '`job_finished`, `job_log_closed`: the job was cancelled longer ago than the log grace period, or `log_seq_gap`: the batch starts past the next `seq` the log expects (send the earlier batches first)',
    },
    413: {
      description:
        '`log_chunk_too_large`, `log_batch_too_large`, or `job_log_truncated`: the job log reached its cap and was cut with a `SYSTEM` line',
    },
  },
});

export const readJobLogsAsAgent = operation({
  method: 'get',
  path: '/api/jobs/{id}/logs',
  operationId: 'readJobLogsAsAgent',
  summary: 'Read the log of a job, in order',
  tags: ['agent'],
  auth: 'worker',
  params: IdParams,
  query: LogQuery,
  responses: { 200: { description: 'A page of log chunks', schema: LogPage } },
});

export const uploadPlanArtifact = operation({
  method: 'post',
  path: '/api/jobs/{id}/plan-artifact',
  operationId: 'uploadPlanArtifact',
  summary: 'Upload the plan file of a PLAN job (at most 50 MiB, streamed)',
  tags: ['agent'],
  auth: 'worker',
  params: IdParams,
  body: 'binary',
  responses: { 201: { description: 'Stored', schema: ArtifactResponse } },
});

export const downloadPlanArtifact = operation({
  method: 'get',
  path: '/api/jobs/{id}/plan-artifact',
  operationId: 'downloadPlanArtifact',
  summary: 'Download the plan file of a PLAN job',
  description: '`ETag` is the sha256 of the file; any agent of the owner may download it.',
  tags: ['agent'],
  auth: 'worker',
  params: IdParams,
  responses: { 200: { description: 'The plan file', contentType: 'application/octet-stream' } },
});

export const uploadPlanChanges = operation({
  method: 'put',
  path: '/api/jobs/{id}/plan-changes',
  operationId: 'uploadPlanChanges',
  summary: 'Store the change document of a PLAN job, after its plan file',
  description: `The redacted attribute diff the agent derived from the engine's plan (sensitive values masked on the agent, never sent), at most ${MAX_PLAN_CHANGES_BYTES} bytes. Kept beside the plan file; a repeated upload replaces it. Only the worker that claimed the running PLAN, once its plan file is stored (\`404 plan_artifact_not_found\` before).`,
  tags: ['agent'],
  auth: 'worker',
  params: IdParams,
  body: PlanChangesSchema,
  bodyLimit: MAX_PLAN_CHANGES_BYTES + 64 * 1024,
  responses: { 200: { description: 'Stored', schema: ArtifactResponse } },
});

export const downloadConfigurationVersion = operation({
  method: 'get',
  path: '/api/jobs/{id}/configuration-versions/{version}',
  operationId: 'downloadConfigurationVersion',
  summary: 'Download the configuration version (.tar.gz) a claimed job runs',
  description:
    "For the agent that claimed the job: the tarball the claim's `configuration_version` names, a version of the job's configuration. `ETag` is its sha256; the bytes are checked against the recorded digest as they are read.",
  tags: ['agent'],
  auth: 'worker',
  params: ConfigurationVersionParams,
  responses: { 200: { description: 'The tarball', contentType: 'application/gzip' } },
});

export const registerWorker = operation({
  method: 'post',
  path: '/api/workers/register',
  operationId: 'registerWorker',
  summary: 'Register an agent for the signed-in user',
  description: 'Needs a CLI bearer token: the agent belongs to that user. The token is returned only this once.',
  tags: ['agent'],
  auth: 'user',
  body: RegisterWorkerBody,
  responses: { 201: { description: 'Credentials of the new agent', schema: RegistrationResponse } },
});

export const getWorkerForAgent = operation({
  method: 'get',
  path: '/api/workers/{id}',
  operationId: 'getWorkerForAgent',
  summary: 'An agent of the same owner, with its deploy metadata',
  tags: ['agent'],
  auth: 'worker',
  params: IdParams,
  responses: { 200: { description: 'The worker', schema: Worker } },
});

export const updateWorkerMetadata = operation({
  method: 'post',
  path: '/api/workers/{id}/metadata',
  operationId: 'updateWorkerMetadata',
  summary: 'Record the deployment state of this agent',
  tags: ['agent'],
  auth: 'worker',
  params: IdParams,
  body: MetadataBody,
  responses: { 200: { description: 'The worker', schema: Worker } },
});

/** In the order the API reference lists them. */
export const agentOperations = {
  claimJob,
  heartbeat,
  getJobForAgent,
  reportJobStatus,
  appendJobLog,
  readJobLogsAsAgent,
  uploadPlanArtifact,
  downloadPlanArtifact,
  uploadPlanChanges,
  downloadConfigurationVersion,
  registerWorker,
  getWorkerForAgent,
  updateWorkerMetadata,
};
