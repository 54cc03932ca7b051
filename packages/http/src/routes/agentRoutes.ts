import { pipeline } from 'node:stream/promises';
import { type ClaimedJob, type EventBus, MAX_PLAN_CHANGES_BYTES, type UseCases } from '@trellis/core';
import type { JobFlowMetrics } from '../observability/JobFlowMetrics.js';
import { traceJobId } from '../observability/tracing.js';
import type { ClaimLongPolls } from '../limits/ClaimLongPolls.js';
import { waitForEvent } from '../realtime/waitForEvent.js';
import { defineRoute, type RouteSpec } from '../routing/route.js';
import {
  ArtifactResponse,
  ClaimQuery,
  ClaimResponse,
  ConfigurationVersionParams,
  HeartbeatBody,
  HeartbeatResponse,
  IdParams,
  AgentJob,
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
  Worker,
} from '@trellis/contract';
import { planUploadBody } from './planArtifactUpload.js';

/** How often a long-polled claim re-checks even without an event (events are best effort). */
const CLAIM_RECHECK_MS = 2000;

/** The agent protocol (SPEC §4.2). */
export function agentRoutes(
  useCases: UseCases,
  events: EventBus,
  shutdown: AbortSignal,
  longPolls: ClaimLongPolls,
  /** Observes claims, first reports and log chunks; null: no metrics. */
  jobFlow: JobFlowMetrics | null = null,
): RouteSpec[] {
  const claimAnswer = (claimed: ClaimedJob) => {
    jobFlow?.claim(claimed.job);
    traceJobId(claimed.job.id);
    return { status: 200, body: claimed };
  };
  return [
    defineRoute({
      method: 'post',
      path: '/api/jobs/claim',
      operationId: 'claimJob',
      summary: 'Claim the next job this agent may run',
      description:
        "Takes the oldest queued job of the agent owner that is assigned to nobody or to this agent, one job at a time per vine; a DEPLOY of a plan keeps its plan's place in the queue. With `?wait=N` (at most 30) the request waits up to N seconds for a job; a worker may have a few such waits open at once (default 4), and the server a bounded number in all: past either, `429` with code `too_many_long_polls`.",
      tags: ['agent'],
      auth: 'worker',
      query: ClaimQuery,
      responses: {
        200: { description: 'The claimed job', schema: ClaimResponse },
        204: { description: 'No job available' },
      },
      handler: async ({ worker, query, req }) => {
        // A plain claim (no `wait`, the steady case) is one attempt: no slot, no disconnect watch.
        const features = (query.features ?? '').split(',').map((feature) => feature.trim());
        if (!query.wait) {
          const claimed = await useCases.jobs.claim(worker, features);
          return claimed ? claimAnswer(claimed) : { status: 204 };
        }
        const deadline = Date.now() + query.wait * 1000;
        const release = longPolls.acquire(worker.workerId);
        try {
          const disconnected = new AbortController();
          req.on('close', () => disconnected.abort());
          const closed = { signal: AbortSignal.any([disconnected.signal, shutdown]) };
          for (;;) {
            // A client that went away while the poll waited gets no job: the answer would never
            // reach it, and the job it took would end FAILED once the agent says it never got it.
            if (disconnected.signal.aborted) return { status: 204 };
            const claimed = await useCases.jobs.claim(worker, features);
            if (claimed) return claimAnswer(claimed);
            const remaining = deadline - Date.now();
            if (remaining <= 0 || closed.signal.aborted) return { status: 204 };
            await waitForEvent(
              events,
              (event) =>
                event.owner_id === worker.ownerId &&
                (event.type === 'job_queued' || event.type === 'job_status_changed'),
              Math.min(remaining, CLAIM_RECHECK_MS),
              closed.signal,
            );
          }
        } finally {
          release();
        }
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/workers/heartbeat',
      operationId: 'heartbeat',
      summary: 'Tell the control plane this agent is alive',
      description: 'Every 30 s. The answer lists the jobs of this agent that were cancelled, so it can stop them.',
      tags: ['agent'],
      auth: 'worker',
      body: HeartbeatBody,
      responses: { 200: { description: 'Cancelled jobs to stop', schema: HeartbeatResponse } },
      handler: async ({ worker, body }) => ({ status: 200, body: await useCases.workers.heartbeat(worker, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/jobs/{id}',
      operationId: 'getJobForAgent',
      summary: 'A job of this agent owner, with its full snapshot',
      tags: ['agent'],
      auth: 'worker',
      params: IdParams,
      responses: { 200: { description: 'The job', schema: AgentJob } },
      handler: async ({ worker, params }) => ({
        status: 200,
        body: await useCases.jobs.getForWorker(worker, params.id),
      }),
    }),
    defineRoute({
      method: 'put',
      path: '/api/jobs/{id}/status',
      operationId: 'reportJobStatus',
      summary: 'Report the status of a claimed job',
      description:
        'Only the agent that claimed the job. `FAILED` sets the vine FAILED with `error_message`; a successful DEPLOY stores its outputs on the vine in the same transaction.',
      tags: ['agent'],
      auth: 'worker',
      params: IdParams,
      body: StatusBody,
      responses: {
        200: { description: 'The job', schema: AgentJob },
        413: { description: '`metadata_too_large`: the merged execution_metadata would pass its cap' },
      },
      handler: async ({ worker, params, body }) => {
        const job = await useCases.jobs.reportStatus(worker, params.id, body);
        jobFlow?.report(params.id);
        return { status: 200, body: job };
      },
    }),
    defineRoute({
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
      handler: async ({ worker, params, body }) => {
        if ('chunks' in body) {
          const stored = await useCases.logs.appendBatch(worker, params.id, body);
          jobFlow?.report(params.id);
          // What this batch added: a retry skips the seqs already stored, the cap cuts the tail.
          const firstNew = stored.last_seq - stored.stored;
          for (const chunk of body.chunks) {
            if (chunk.seq > firstNew && chunk.seq <= stored.last_seq) jobFlow?.logChunk(chunk.log_chunk);
          }
          return { status: 201, body: stored };
        }
        const stored = await useCases.logs.append(worker, params.id, body);
        jobFlow?.report(params.id);
        jobFlow?.logChunk(body.log_chunk);
        return { status: 201, body: stored };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/jobs/{id}/logs',
      operationId: 'readJobLogsAsAgent',
      summary: 'Read the log of a job, in order',
      tags: ['agent'],
      auth: 'worker',
      params: IdParams,
      query: LogQuery,
      responses: { 200: { description: 'A page of log chunks', schema: LogPage } },
      handler: async ({ worker, params, query }) => ({
        status: 200,
        body: await useCases.logs.read(worker.ownerId, params.id, query),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/jobs/{id}/plan-artifact',
      operationId: 'uploadPlanArtifact',
      summary: 'Upload the plan file of a PLAN job (at most 50 MiB, streamed)',
      tags: ['agent'],
      auth: 'worker',
      params: IdParams,
      body: 'binary',
      responses: { 201: { description: 'Stored', schema: ArtifactResponse } },
      handler: async ({ worker, params, req }) => ({
        status: 201,
        body: await useCases.planArtifacts.upload(worker, params.id, planUploadBody(req)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/jobs/{id}/plan-artifact',
      operationId: 'downloadPlanArtifact',
      summary: 'Download the plan file of a PLAN job',
      description: '`ETag` is the sha256 of the file; any agent of the owner may download it.',
      tags: ['agent'],
      auth: 'worker',
      params: IdParams,
      responses: { 200: { description: 'The plan file', contentType: 'application/octet-stream' } },
      handler: async ({ worker, params, res }) => {
        const artifact = await useCases.planArtifacts.download(worker, params.id);
        res.status(200);
        res.setHeader('Content-Type', 'application/octet-stream');
        res.setHeader('Content-Length', String(artifact.size));
        res.setHeader('ETag', `"${artifact.sha256}"`);
        res.setHeader('X-Checksum-Sha256', artifact.sha256);
        await pipeline(artifact.body, res);
        return undefined;
      },
    }),
    defineRoute({
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
      handler: async ({ worker, params, body }) => ({
        status: 200,
        body: await useCases.planArtifacts.uploadChanges(worker, params.id, body),
      }),
    }),
    defineRoute({
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
      handler: async ({ worker, params, res }) => {
        const version = await useCases.configurationVersions.download(worker, params.id, params.version);
        res.status(200);
        res.setHeader('Content-Type', 'application/gzip');
        res.setHeader('Content-Length', String(version.size));
        res.setHeader('ETag', `"${version.sha256}"`);
        res.setHeader('X-Checksum-Sha256', version.sha256);
        await pipeline(version.body, res);
        return undefined;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/workers/register',
      operationId: 'registerWorker',
      summary: 'Register an agent for the signed-in user',
      description: 'Needs a CLI bearer token: the agent belongs to that user. The token is returned only this once.',
      tags: ['agent'],
      auth: 'user',
      body: RegisterWorkerBody,
      responses: { 201: { description: 'Credentials of the new agent', schema: RegistrationResponse } },
      handler: async ({ user, body }) => ({ status: 201, body: await useCases.workers.register(user, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/workers/{id}',
      operationId: 'getWorkerForAgent',
      summary: 'An agent of the same owner, with its deploy metadata',
      tags: ['agent'],
      auth: 'worker',
      params: IdParams,
      responses: { 200: { description: 'The worker', schema: Worker } },
      handler: async ({ worker, params }) => ({
        status: 200,
        body: await useCases.workers.get(worker.ownerId, params.id),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/workers/{id}/metadata',
      operationId: 'updateWorkerMetadata',
      summary: 'Record the deployment state of this agent',
      tags: ['agent'],
      auth: 'worker',
      params: IdParams,
      body: MetadataBody,
      responses: { 200: { description: 'The worker', schema: Worker } },
      handler: async ({ worker, params, body }) => ({
        status: 200,
        body: await useCases.workers.updateMetadata(worker, params.id, body),
      }),
    }),
  ];
}
