import { NotFoundError, type PlanArtifact, type PlanArtifactStore, type PlanChangesRecord } from '@trellis/core';
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

  async saveChanges(record: PlanChangesRecord): Promise<PlanChangesRecord> {
    const updated = await this.db
      .table('plan_artifacts')
      .where({ owner_id: record.owner_id, job_id: record.job_id })
      .update({ changes_storage_key: record.storage_key, changes_size: record.size, changes_sha256: record.sha256 });
    if (updated === 0) throw new NotFoundError('plan_artifact');
    return { ...record };
  }

  async getChanges(ownerId: string, jobId: string): Promise<PlanChangesRecord | null> {
    const row = await this.db
      .table('plan_artifacts')
      .where({ owner_id: ownerId, job_id: jobId })
      .whereNotNull('changes_storage_key')
      .first('job_id', 'owner_id', 'changes_storage_key', 'changes_size', 'changes_sha256');
    if (!row) return null;
    return {
      job_id: uuidOut(row.job_id),
      owner_id: uuidOut(row.owner_id),
      storage_key: textOut(row.changes_storage_key),
      size: integerOut(row.changes_size),
      sha256: textOut(row.changes_sha256),
    };
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
