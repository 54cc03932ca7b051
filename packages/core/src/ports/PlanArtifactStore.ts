import type { PlanArtifact } from '../domain/records.js';

/** Where plan artifacts are recorded; the bytes live in the `ArtifactStore`. */
export interface PlanArtifactStore {
  /** Records the artifact of a job, replacing an earlier upload of the same job. */
  save(artifact: PlanArtifact): Promise<PlanArtifact>;
  get(ownerId: string, jobId: string): Promise<PlanArtifact | null>;
}
