import { pipeline } from 'node:stream/promises';
import type { ClaimedJob, EventBus, UseCases } from '@trellis/core';
import type { JobFlowMetrics } from '../observability/JobFlowMetrics.js';
import { traceJobId } from '../observability/tracing.js';
import type { ClaimLongPolls } from '../limits/ClaimLongPolls.js';
import { waitForEvent } from '../realtime/waitForEvent.js';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';
import type { Logger } from '../logger.js';
import { planUploadBody } from './planArtifactUpload.js';

/** How often a long-polled claim re-checks even without an event (events are best effort). */
const CLAIM_RECHECK_MS = 2000;

/** The agent protocol (SPEC §4.2). */
export function agentRoutes(
  useCases: UseCases,
  events: EventBus,
  shutdown: AbortSignal,
  longPolls: ClaimLongPolls,
  logger: Logger,
  /** Observes claims, first reports and log chunks; null: no metrics. */
  jobFlow: JobFlowMetrics | null = null,
): RouteSpec[] {
  const claimed = (job: ClaimedJob) => {
    jobFlow?.claim(job.job);
    traceJobId(job.job.id);
    return job;
  };
  const claimAnswer = (job: ClaimedJob) => ({ status: 200 as const, body: claimed(job) });
  const featuresOf = (list: string | undefined) => (list ?? '').split(',').map((feature) => feature.trim());
  return [
    implement(operations.claimJob, async ({ worker, query, req }) => {
      // A plain claim (no `wait`, the steady case) is one attempt: no slot, no disconnect watch.
      const features = featuresOf(query.features);
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
              event.owner_id === worker.ownerId && (event.type === 'job_queued' || event.type === 'job_status_changed'),
            Math.min(remaining, CLAIM_RECHECK_MS),
            closed.signal,
          );
        }
      } finally {
        release();
      }
    }),
    implement(operations.heartbeat, async ({ worker, body }) => ({
      status: 200,
      body: await useCases.workers.heartbeat(worker, body),
    })),
    implement(operations.getJobForAgent, async ({ worker, params }) => ({
      status: 200,
      body: await useCases.jobs.getForWorker(worker, params.id),
    })),
    implement(operations.reportJobStatus, async ({ worker, params, query, body }) => {
      if (query.claim_next === undefined) {
        const job = await useCases.jobs.reportStatus(worker, params.id, body);
        jobFlow?.report(params.id);
        return { status: 200, body: job };
      }
      const { job, next, claimError } = await useCases.jobs.reportStatusAndClaim(
        worker,
        params.id,
        body,
        featuresOf(query.claim_next),
      );
      jobFlow?.report(params.id);
      if (claimError !== null) {
        logger.warn(
          { err: claimError, job_id: job.id },
          "the claim after a job's final report failed; the agent claims as usual",
        );
      }
      return { status: 200, body: { ...job, next_claim: next ? claimed(next) : null } };
    }),
    implement(operations.appendJobLog, async ({ worker, params, body }) => {
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
    }),
    implement(operations.readJobLogsAsAgent, async ({ worker, params, query }) => ({
      status: 200,
      body: await useCases.logs.read(worker.ownerId, params.id, query),
    })),
    implement(operations.uploadPlanArtifact, async ({ worker, params, req }) => ({
      status: 201,
      body: await useCases.planArtifacts.upload(worker, params.id, planUploadBody(req)),
    })),
    implement(operations.downloadPlanArtifact, async ({ worker, params, res }) => {
      const artifact = await useCases.planArtifacts.download(worker, params.id);
      res.status(200);
      res.setHeader('Content-Type', 'application/octet-stream');
      res.setHeader('Content-Length', String(artifact.size));
      res.setHeader('ETag', `"${artifact.sha256}"`);
      res.setHeader('X-Checksum-Sha256', artifact.sha256);
      await pipeline(artifact.body, res);
      return undefined;
    }),
    implement(operations.uploadPlanChanges, async ({ worker, params, body }) => ({
      status: 200,
      body: await useCases.planArtifacts.uploadChanges(worker, params.id, body),
    })),
    implement(operations.downloadConfigurationVersion, async ({ worker, params, res }) => {
      const version = await useCases.configurationVersions.download(worker, params.id, params.version);
      res.status(200);
      res.setHeader('Content-Type', 'application/gzip');
      res.setHeader('Content-Length', String(version.size));
      res.setHeader('ETag', `"${version.sha256}"`);
      res.setHeader('X-Checksum-Sha256', version.sha256);
      await pipeline(version.body, res);
      return undefined;
    }),
    implement(operations.registerWorker, async ({ user, body }) => ({
      status: 201,
      body: await useCases.workers.register(user, body),
    })),
    implement(operations.getWorkerForAgent, async ({ worker, params }) => ({
      status: 200,
      body: await useCases.workers.get(worker.ownerId, params.id),
    })),
    implement(operations.updateWorkerMetadata, async ({ worker, params, body }) => ({
      status: 200,
      body: await useCases.workers.updateMetadata(worker, params.id, body),
    })),
  ];
}
