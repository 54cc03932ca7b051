import { type LogChunk, type LogStore, NotFoundError, type StreamType } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { integerOut, type Row, textOut, timeIn, timeOut, uuidOut } from '../rows.js';

export class SqlLogStore implements LogStore {
  constructor(private readonly db: SqlSession) {}

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
