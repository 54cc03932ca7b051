import type { Readable } from 'node:stream';
import { verifiedArtifactBody } from '../artifacts/VerifiedBody.js';
import type { WorkerActor } from '../domain/actors.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../domain/errors.js';
import type { PlanArtifact } from '../domain/records.js';
import { requireUuid } from '../domain/validation.js';
import { ownerScope } from '../ports/UnitOfWork.js';
import { type CoreDeps, isoNow } from './CoreDeps.js';

/** SPEC §8: a plan artifact is at most 50 MB (taken as 50 MiB). */
export const MAX_PLAN_ARTIFACT_BYTES = 50 * 1024 * 1024;

export function planArtifactKey(ownerId: string, jobId: string): string {
  return `plans/${ownerId}/${jobId}/terraform.plan.out`;
}

export class PlanArtifactUseCases {
  constructor(private readonly deps: CoreDeps) {}

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
    await this.deps.uow.run(ownerScope(worker.ownerId), async (stores) => {
      const job = await stores.jobs.get(worker.ownerId, jobId);
      if (!job) throw new NotFoundError('job');
      if (job.claimed_by_worker_id !== worker.workerId) {
        throw new ForbiddenError('job_not_claimed_by_worker', 'this job was not claimed by this worker');
      }
      if (job.job_type !== 'PLAN') throw new ConflictError('not_a_plan_job', 'only PLAN jobs have plan artifacts');
      if (job.status !== 'PROCESSING') {
        throw new ConflictError('job_not_running', `the job is ${job.status}; artifacts are uploaded while it runs`);
      }
    });
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
}
