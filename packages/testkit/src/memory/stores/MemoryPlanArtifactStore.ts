import type { PlanArtifact, PlanArtifactStore } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryPlanArtifactStore implements PlanArtifactStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async save(artifact: PlanArtifact): Promise<PlanArtifact> {
    const { planArtifacts } = this.tx.state;
    this.tx.checkWrite('plan_artifacts', artifact.owner_id);
    const existing = planArtifacts.get(artifact.job_id);
    if (existing) this.tx.checkWrite('plan_artifacts', existing.owner_id);
    planArtifacts.set(artifact.job_id, copy(artifact));
    return copy(artifact);
  }

  async get(ownerId: string, jobId: string): Promise<PlanArtifact | null> {
    const artifact = this.tx.state.planArtifacts.get(jobId);
    return artifact && artifact.owner_id === ownerId && this.tx.sees(ownerId) ? copy(artifact) : null;
  }
}
