import type { Readable } from 'node:stream';
import { verifiedArtifactBody } from '../artifacts/VerifiedBody.js';
import type { UserActor, WorkerActor } from '../domain/actors.js';
import { ConflictError, ForbiddenError, NotFoundError, UnavailableError } from '../domain/errors.js';
import { MAX_PLAN_CHANGES_BYTES, type PlanChanges, type PlanChangesView } from '../domain/planChanges.js';
import type { PlanArtifact, PlanChangesRecord } from '../domain/records.js';
import { requireUuid } from '../domain/validation.js';
import { ownerScope, type Stores } from '../ports/UnitOfWork.js';
import { Access } from './Access.js';
import { type CoreDeps, isoNow } from './CoreDeps.js';

/** SPEC §8: a plan artifact is at most 50 MB (taken as 50 MiB). */
export const MAX_PLAN_ARTIFACT_BYTES = 50 * 1024 * 1024;

export function planArtifactKey(ownerId: string, jobId: string): string {
  return `plans/${ownerId}/${jobId}/terraform.plan.out`;
}

/** The change document of a plan (issue 29), beside its plan file. */
export function planChangesKey(ownerId: string, jobId: string): string {
  return `plans/${ownerId}/${jobId}/changes.json`;
}

function planChangesNotFound(detail: string): NotFoundError {
  return new NotFoundError('plan_changes', 'plan_changes_not_found', `the job has no change document: ${detail}`);
}

export class PlanArtifactUseCases {
  private readonly access: Access;

  constructor(private readonly deps: CoreDeps) {
    this.access = new Access(deps);
  }

  /**
   * `POST /api/jobs/{id}/plan-artifact` by the agent running the PLAN job. The body is streamed
   * to the artifact store, which stops at the limit and keeps any earlier upload intact.
   */
  async upload(
    worker: WorkerActor,
    id: unknown,
    body: AsyncIterable<Uint8Array>,
  ): Promise<{ job_id: string; size: number; sha256: string }> {
    const jobId = requireUuid(id, 'id');
    await this.deps.uow.run(ownerScope(worker.ownerId), (stores) => requireRunningPlan(stores, worker, jobId));
    const key = planArtifactKey(worker.ownerId, jobId);
    const stored = await this.deps.artifacts.put(key, body, { maxBytes: MAX_PLAN_ARTIFACT_BYTES });
    const record: PlanArtifact = {
      job_id: jobId,
      owner_id: worker.ownerId,
      storage_key: key,
      size: stored.size,
      sha256: stored.sha256,
      created_at: isoNow(this.deps),
    };
    await this.deps.uow.run(ownerScope(worker.ownerId), (stores) => stores.planArtifacts.save(record));
    return { job_id: jobId, size: stored.size, sha256: stored.sha256 };
  }

  /** `GET /api/jobs/{id}/plan-artifact`: any worker of the owner (the apply often runs elsewhere). */
  async download(worker: WorkerActor, id: unknown): Promise<{ body: Readable; size: number; sha256: string }> {
    const jobId = requireUuid(id, 'id');
    const record = await this.deps.uow.run(ownerScope(worker.ownerId), async (stores) => {
      const job = await stores.jobs.get(worker.ownerId, jobId);
      if (!job) throw new NotFoundError('job');
      return stores.planArtifacts.get(worker.ownerId, jobId);
    });
    if (!record) throw new NotFoundError('plan_artifact');
    const artifact = await this.deps.artifacts.get(record.storage_key);
    const body = verifiedArtifactBody(record.storage_key, artifact.body, artifact.size, record);
    return { body, size: record.size, sha256: record.sha256 };
  }

  /**
   * `PUT /api/jobs/{id}/plan-changes` by the agent running the PLAN job, after its plan file:
   * the redacted change document it derived from the plan (sensitive values already masked on
   * the agent, never sent). Authorized as the plan file is (the worker that claimed the running
   * PLAN), and kept the same way: an object beside the plan file in the artifact store, its size
   * and sha256 on the plan's record. Not a job result: a document of up to
   * `MAX_PLAN_CHANGES_BYTES` would swell every job list that carries `execution_metadata`.
   * The body was checked against the contract; a repeated upload replaces the document.
   */
  async uploadChanges(
    worker: WorkerActor,
    id: unknown,
    document: PlanChanges,
  ): Promise<{ job_id: string; size: number; sha256: string }> {
    const jobId = requireUuid(id, 'id');
    await this.deps.uow.run(ownerScope(worker.ownerId), async (stores) => {
      await requireRunningPlan(stores, worker, jobId);
      if (!(await stores.planArtifacts.get(worker.ownerId, jobId))) throw new NotFoundError('plan_artifact');
    });
    const key = planChangesKey(worker.ownerId, jobId);
    const bytes = Buffer.from(JSON.stringify(document));
    const stored = await this.deps.artifacts.put(key, oneChunk(bytes), { maxBytes: MAX_PLAN_CHANGES_BYTES });
    const record: PlanChangesRecord = {
      job_id: jobId,
      owner_id: worker.ownerId,
      storage_key: key,
      size: stored.size,
      sha256: stored.sha256,
    };
    await this.deps.uow.run(ownerScope(worker.ownerId), (stores) => stores.planArtifacts.saveChanges(record));
    return { job_id: jobId, size: stored.size, sha256: stored.sha256 };
  }

  /**
   * `GET /api/cli/jobs/{id}/plan/changes`: the change document of a finished PLAN, for whoever
   * may read the job. A job that is not a PLAN, has not succeeded, or was planned by an agent that
   * made no document is `404 plan_changes_not_found`.
   */
  async changes(user: UserActor, id: unknown): Promise<PlanChangesView> {
    const jobId = requireUuid(id, 'id');
    const { record: job, scope } = await this.access.locate(user, 'read', 'job_not_found', (stores, ownerId) =>
      stores.jobs.get(ownerId, jobId),
    );
    if (job.job_type !== 'PLAN') throw planChangesNotFound(`it is a ${job.job_type} job, not a PLAN`);
    if (job.status !== 'SUCCESS') throw planChangesNotFound(`the plan is ${job.status}, not SUCCESS`);
    const record = await this.deps.uow.read(scope, (stores) => stores.planArtifacts.getChanges(job.owner_id, job.id));
    if (!record) throw planChangesNotFound('its agent made none (an agent older than change documents)');
    const artifact = await this.deps.artifacts.get(record.storage_key);
    const chunks: Buffer[] = [];
    for await (const chunk of verifiedArtifactBody(record.storage_key, artifact.body, artifact.size, record)) {
      chunks.push(chunk as Buffer);
    }
    let document: PlanChanges;
    try {
      document = JSON.parse(Buffer.concat(chunks).toString('utf8')) as PlanChanges;
    } catch {
      throw new UnavailableError('artifact_digest_mismatch', `the change document of job ${job.id} is not JSON`);
    }
    return { job_id: job.id, ...document };
  }
}

/** Only the worker that claimed a running PLAN uploads its artifacts. */
async function requireRunningPlan(stores: Stores, worker: WorkerActor, jobId: string): Promise<void> {
  const job = await stores.jobs.get(worker.ownerId, jobId);
  if (!job) throw new NotFoundError('job');
  if (job.claimed_by_worker_id !== worker.workerId) {
    throw new ForbiddenError('job_not_claimed_by_worker', 'this job was not claimed by this worker');
  }
  if (job.job_type !== 'PLAN') throw new ConflictError('not_a_plan_job', 'only PLAN jobs have plan artifacts');
  if (job.status !== 'PROCESSING') {
    throw new ConflictError('job_not_running', `the job is ${job.status}; artifacts are uploaded while it runs`);
  }
}

async function* oneChunk(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}
