import type { PlanArtifact, PlanChangesRecord } from '../domain/records.js';

/** Where plan artifacts are recorded; the bytes live in the `ArtifactStore`. */
export interface PlanArtifactStore {
  /** Records the artifact of a job, replacing an earlier upload of the same job (its change document stays). */
  save(artifact: PlanArtifact): Promise<PlanArtifact>;
  get(ownerId: string, jobId: string): Promise<PlanArtifact | null>;
  /**
   * Records the change document of a job whose plan file is recorded (`NotFoundError` with
   * `plan_artifact_not_found` otherwise), replacing an earlier one.
   */
  saveChanges(record: PlanChangesRecord): Promise<PlanChangesRecord>;
  /** Null for a job with no plan or a plan without a change document (an older agent's). */
  getChanges(ownerId: string, jobId: string): Promise<PlanChangesRecord | null>;
}
