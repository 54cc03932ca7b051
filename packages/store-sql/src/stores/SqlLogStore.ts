import { type LogChunk, type LogStore, type LogUsage, NotFoundError, type StreamType } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { integerOut, type Row, textOut, timeIn, timeOut, uuidOut } from '../rows.js';

/** Jobs whose logs one retention batch deletes from at most. */
const RETENTION_JOBS_PER_BATCH = 100;

export class SqlLogStore implements LogStore {
  constructor(private readonly db: SqlSession) {}

  async usage(ownerId: string, jobId: string): Promise<LogUsage> {
    const job = await this.db
      .lockForUpdate(this.db.table('jobs').where({ owner_id: ownerId, id: jobId }))
      .first('log_bytes', 'log_cut');
    if (!job) throw new NotFoundError('job');
    return { bytes: integerOut(job.log_bytes), cut: job.log_cut === true || job.log_cut === 1 };
  }

  async markCut(ownerId: string, jobId: string): Promise<void> {
    const updated = await this.db.table('jobs').where({ owner_id: ownerId, id: jobId }).update({ log_cut: true });
    if (updated === 0) throw new NotFoundError('job');
  }

  async deleteOfJobsFinishedBefore(cutoff: string, limit: number): Promise<number> {
    if (limit <= 0) return 0;
    // Only jobs that still hold log bytes (a partial index): jobs purged earlier are not walked again.
    const jobIds: string[] = (
      await this.db
        .table('jobs')
        .where('finished_at', '<', timeIn(cutoff))
        .where('log_bytes', '>', 0)
        .orderBy('finished_at')
        .limit(RETENTION_JOBS_PER_BATCH)
        .select('id')
    ).map((row: Row) => uuidOut(row.id));
    if (jobIds.length === 0) return 0;
    const doomed = this.db.table('log_chunks').whereIn('job_id', jobIds).limit(limit).select('id');
    const deleted = await this.db.table('log_chunks').whereIn('id', doomed).delete();
    // Fewer than asked: every chunk of these jobs is gone, so they hold no log bytes any more.
    if (deleted < limit) await this.db.table('jobs').whereIn('id', jobIds).update({ log_bytes: 0 });
    return deleted;
  }

  async append(ownerId: string, jobId: string, chunk: string, streamType: StreamType, at: string): Promise<LogChunk> {
    // Locking the job orders concurrent appends to it: each takes its id only once the previous
    // one committed, so a reader paging with `after=<id>` can never see a later id commit before
    // an earlier one and skip it. It also checks that the job is the owner's.
    const job = await this.db.lockForUpdate(this.db.table('jobs').where({ owner_id: ownerId, id: jobId })).first('id');
    if (!job) throw new NotFoundError('job');
    const [row] = await this.db
      .insert('log_chunks', {
        job_id: jobId,
        owner_id: ownerId,
        log_chunk: chunk,
        stream_type: streamType,
        created_at: timeIn(at),
      })
      .returning('*');
    await this.db
      .table('jobs')
      .where({ owner_id: ownerId, id: jobId })
      .increment('log_bytes', Buffer.byteLength(chunk, 'utf8'));
    return toLogChunk(row);
  }

  async list(ownerId: string, jobId: string, after: number, limit: number): Promise<LogChunk[]> {
    const rows: Row[] = await this.db
      .table('log_chunks')
      .where({ owner_id: ownerId, job_id: jobId })
      .where('id', '>', after)
      .orderBy('id')
      .limit(limit);
    return rows.map(toLogChunk);
  }
}

function toLogChunk(row: Row): LogChunk {
  return {
    id: integerOut(row.id),
    job_id: uuidOut(row.job_id),
    log_chunk: textOut(row.log_chunk),
    stream_type: textOut(row.stream_type) as StreamType,
    created_at: timeOut(row.created_at),
  };
}
