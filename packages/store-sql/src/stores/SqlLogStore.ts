import {
  type JobStatus,
  type LogAppendState,
  type LogChunk,
  type LogStore,
  type LogUsage,
  type NewLogChunk,
  NotFoundError,
  type StreamType,
} from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { integerOut, type Row, textOut, timeIn, timeOut, timeOutOrNull, uuidOut, uuidOutOrNull } from '../rows.js';

/** Jobs whose logs one retention batch deletes from at most. */
const RETENTION_JOBS_PER_BATCH = 100;

export class SqlLogStore implements LogStore {
  constructor(private readonly db: SqlSession) {}

  async usage(ownerId: string, jobId: string): Promise<LogUsage> {
    const job = await this.db
      .lockForUpdate(this.db.table('jobs').where({ owner_id: ownerId, id: jobId }))
      .first('log_bytes', 'log_cut', this.lastSeq(jobId, 0));
    if (!job) throw new NotFoundError('job');
    return {
      bytes: integerOut(job.log_bytes),
      cut: job.log_cut === true || job.log_cut === 1,
      lastSeq: integerOrZero(job.last_seq),
    };
  }

  async lockForAppend(ownerId: string, jobId: string, firstSeq: number | null): Promise<LogAppendState | null> {
    const from = firstSeq === null ? null : firstSeq - 1;
    const job = await this.db
      .lockForUpdate(this.db.table('jobs').where({ owner_id: ownerId, id: jobId }))
      .first(
        'status',
        'claimed_by_worker_id',
        'finished_at',
        'log_bytes',
        'log_cut',
        ...(from === null ? [] : [this.lastSeq(jobId, from), this.bytesAtStart(ownerId, jobId)]),
      );
    if (!job) return null;
    let lastSeq = from === null ? null : integerOrZero(job.last_seq);
    if (from !== null) {
      // The lock re-reads the job row once another append let it go, but the seq probe saw the log
      // as of the statement's start (Postgres, READ COMMITTED): when the bytes moved meanwhile,
      // probe again now that the job is ours. Then, when nothing is found from `from` on, the batch
      // would leave a gap (or the log is empty): say where the log ends, reading all of its seqs,
      // which only this refused request pays for.
      if (
        job.bytes_at_start !== null &&
        job.bytes_at_start !== undefined &&
        !sameInteger(job.bytes_at_start, job.log_bytes)
      ) {
        const [row] = await this.db
          .table('log_chunks')
          .where('log_chunks.job_id', jobId)
          .where('log_chunks.seq', '>=', from)
          .max('seq as last_seq');
        lastSeq = integerOrZero(row?.last_seq);
      }
      if (from > 0 && lastSeq === 0) {
        const [row] = await this.db.table('log_chunks').where('log_chunks.job_id', jobId).max('seq as last_seq');
        lastSeq = integerOrZero(row?.last_seq);
      }
    }
    return {
      job: {
        status: textOut(job.status) as JobStatus,
        claimed_by_worker_id: uuidOutOrNull(job.claimed_by_worker_id),
        finished_at: timeOutOrNull(job.finished_at),
      },
      bytes: integerOut(job.log_bytes),
      cut: job.log_cut === true || job.log_cut === 1,
      lastSeq,
    };
  }

  /** The job's log bytes as the statement's snapshot saw them, before any wait for the lock. */
  private bytesAtStart(ownerId: string, jobId: string) {
    return this.db
      .unscoped('jobs')
      .from({ at_start: 'jobs' })
      .where({ 'at_start.owner_id': ownerId, 'at_start.id': jobId })
      .select('at_start.log_bytes')
      .as('bytes_at_start');
  }

  /**
   * The job's highest seq from `from` on, as a column of the lock's read. A range of the (job_id,
   * seq) index: on Postgres, row-level security checks every row a probe reads, so a probe of the
   * whole log (`max(seq)` alone) costs time in proportion to the log's length.
   */
  private lastSeq(jobId: string, from: number) {
    return this.db
      .table('log_chunks')
      .where('log_chunks.job_id', jobId)
      .where('log_chunks.seq', '>=', from)
      .max('seq')
      .as('last_seq');
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
    const [stored] = await this.appendMany(
      ownerId,
      jobId,
      [{ seq: null, log_chunk: chunk, stream_type: streamType }],
      at,
    );
    return stored as LogChunk;
  }

  async appendMany(ownerId: string, jobId: string, chunks: readonly NewLogChunk[], at: string): Promise<LogChunk[]> {
    if (chunks.length === 0) return [];
    const sizes = chunks.map((chunk) => Buffer.byteLength(chunk.log_chunk, 'utf8'));
    const bytes = sizes.reduce((sum, size) => sum + size, 0);
    // The update first: it locks the job (ordering concurrent appends, so ids commit in order)
    // and checks it is the owner's, in the round trip that counts the bytes.
    const updated = await this.db.table('jobs').where({ owner_id: ownerId, id: jobId }).increment('log_bytes', bytes);
    if (updated === 0) throw new NotFoundError('job');
    const createdAt = timeIn(at);
    const sequenced = chunks.some((chunk) => chunk.seq !== null);
    // The hot statement of log ingest: positional values, bound, without the query builder.
    // Unsequenced chunks name no seq column at all (its NULL default cannot conflict), so SPEC's
    // single-chunk form also runs on a schema from before m020 (a replica of this release beside an
    // older database). Only the ids come back: the text is the caller's, megabytes of it.
    const returned = sequenced
      ? await this.db.insertValues(
          'log_chunks',
          SEQUENCED_COLUMNS,
          chunks.map((chunk) => [jobId, ownerId, chunk.seq, chunk.log_chunk, chunk.stream_type, createdAt]),
          'ON CONFLICT (job_id, seq) DO NOTHING RETURNING id, seq',
        )
      : await this.db.insertValues(
          'log_chunks',
          UNSEQUENCED_COLUMNS,
          chunks.map((chunk) => [jobId, ownerId, chunk.log_chunk, chunk.stream_type, createdAt]),
          'RETURNING id',
        );
    const idOfSeq = new Map<number, number>();
    const unsequencedIds: number[] = [];
    for (const row of returned) {
      if (row.seq === null || row.seq === undefined) unsequencedIds.push(integerOut(row.id));
      else idOfSeq.set(integerOut(row.seq), integerOut(row.id));
    }
    // Rows without a seq never conflict: their ids follow their order, as the sequence gave them.
    unsequencedIds.sort((x, y) => x - y);
    const stored: LogChunk[] = [];
    let skipped = 0;
    for (const [index, chunk] of chunks.entries()) {
      const id = chunk.seq === null ? unsequencedIds.shift() : idOfSeq.get(chunk.seq);
      if (id === undefined) {
        skipped += sizes[index] as number;
        continue;
      }
      stored.push({ id, job_id: jobId, log_chunk: chunk.log_chunk, stream_type: chunk.stream_type, created_at: at });
    }
    // Chunks a retry repeated were skipped: take their bytes back (a third round trip, only then).
    if (skipped > 0) {
      await this.db.table('jobs').where({ owner_id: ownerId, id: jobId }).decrement('log_bytes', skipped);
    }
    return stored;
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

const SEQUENCED_COLUMNS = ['job_id', 'owner_id', 'seq', 'log_chunk', 'stream_type', 'created_at'] as const;
const UNSEQUENCED_COLUMNS = ['job_id', 'owner_id', 'log_chunk', 'stream_type', 'created_at'] as const;

function sameInteger(x: unknown, y: unknown): boolean {
  return integerOut(x) === integerOut(y);
}

function integerOrZero(value: unknown): number {
  return value === null || value === undefined ? 0 : integerOut(value);
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
