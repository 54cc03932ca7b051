import { NotFoundError, type PlanArtifact, type PlanArtifactStore } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { integerOut, type Row, textOut, timeIn, timeOut, uuidOut } from '../rows.js';

export class SqlPlanArtifactStore implements PlanArtifactStore {
  constructor(private readonly db: SqlSession) {}

  async save(artifact: PlanArtifact): Promise<PlanArtifact> {
    // The job must be the owner's, or an owner could record an artifact against another's job.
    const job = await this.db.table('jobs').where({ owner_id: artifact.owner_id, id: artifact.job_id }).first('id');
    if (!job) throw new NotFoundError('job');
    const [row] = await this.db
      .insert('plan_artifacts', {
        job_id: artifact.job_id,
        owner_id: artifact.owner_id,
        storage_key: artifact.storage_key,
        size: artifact.size,
        sha256: artifact.sha256,
        created_at: timeIn(artifact.created_at),
      })
      .onConflict(['job_id'])
      .merge(['storage_key', 'size', 'sha256', 'created_at'])
      .returning('*');
    return toPlanArtifact(row);
  }

  async get(ownerId: string, jobId: string): Promise<PlanArtifact | null> {
    const row = await this.db.table('plan_artifacts').where({ owner_id: ownerId, job_id: jobId }).first();
    return row ? toPlanArtifact(row) : null;
  }
}

function toPlanArtifact(row: Row): PlanArtifact {
  return {
    job_id: uuidOut(row.job_id),
    owner_id: uuidOut(row.owner_id),
    storage_key: textOut(row.storage_key),
    size: integerOut(row.size),
    sha256: textOut(row.sha256),
    created_at: timeOut(row.created_at),
  };
}
