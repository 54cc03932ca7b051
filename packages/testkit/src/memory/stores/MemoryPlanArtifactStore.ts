import { NotFoundError, type PlanArtifact, type PlanArtifactStore, type PlanChangesRecord } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryPlanArtifactStore implements PlanArtifactStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async save(artifact: PlanArtifact): Promise<PlanArtifact> {
    const { planArtifacts, jobs } = this.tx.state;
    const job = jobs.get(artifact.job_id);
    // Only a job of the artifact's owner has one, so another owner can never replace it.
    if (!job || job.owner_id !== artifact.owner_id || !this.tx.sees(artifact.owner_id)) {
      throw new NotFoundError('job');
    }
    planArtifacts.set(artifact.job_id, copy(artifact));
    return copy(artifact);
  }

  async get(ownerId: string, jobId: string): Promise<PlanArtifact | null> {
    const artifact = this.tx.state.planArtifacts.get(jobId);
    return artifact && artifact.owner_id === ownerId && this.tx.sees(ownerId) ? copy(artifact) : null;
  }

  async saveChanges(record: PlanChangesRecord): Promise<PlanChangesRecord> {
    if (!(await this.get(record.owner_id, record.job_id))) throw new NotFoundError('plan_artifact');
    this.tx.state.planChanges.set(record.job_id, copy(record));
    return copy(record);
  }

  async getChanges(ownerId: string, jobId: string): Promise<PlanChangesRecord | null> {
    if (!(await this.get(ownerId, jobId))) return null;
    const record = this.tx.state.planChanges.get(jobId);
    return record ? copy(record) : null;
  }
}
