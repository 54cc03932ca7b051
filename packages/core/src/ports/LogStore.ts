import type { StreamType } from '../domain/enums.js';
import type { Job, LogChunk } from '../domain/records.js';

/**
 * What a job's log holds so far: its bytes (UTF-8), whether it was cut at the cap, and the highest
 * agent sequence number stored (0: none; chunks posted without a `seq` have none).
 */
export interface LogUsage {
  bytes: number;
  cut: boolean;
  lastSeq: number;
}

/** What the append rule reads of a job and its log, under the lock `usage` takes. */
export interface LogAppendState {
  job: Pick<Job, 'status' | 'claimed_by_worker_id' | 'finished_at'>;
  bytes: number;
  cut: boolean;
  /** The highest seq the log holds (0: none); null when the chunks to append have no seq. */
  lastSeq: number | null;
}

/** A chunk to store; `seq` is the agent's sequence number in the job (null for chunks without one). */
export interface NewLogChunk {
  seq: number | null;
  log_chunk: string;
  stream_type: StreamType;
}

export interface LogStore {
  /**
   * The job's log usage, read under a lock on the job that lasts the unit of work, so appends to
   * one job are counted one after the other. `NotFoundError` when the job is not the owner's.
   */
  usage(ownerId: string, jobId: string): Promise<LogUsage>;
  /**
   * `usage` with what the append rule needs of the job (its status, claimer and end), in one read
   * under the same lock: the hot path of every log post. `firstSeq` is the seq of the first chunk
   * to append (null: the chunks have none, and no last seq is read); the log is searched for its
   * last seq from `firstSeq - 1` on, so a batch that continues the log costs one index probe
   * however long the log is. Null when the job is not the owner's.
   */
  lockForAppend(ownerId: string, jobId: string, firstSeq: number | null): Promise<LogAppendState | null>;
  /** Stores a chunk, gives it the next id (ids only increase) and adds its bytes to the job's usage. */
  append(ownerId: string, jobId: string, chunk: string, streamType: StreamType, at: string): Promise<LogChunk>;
  /**
   * Stores the chunks in their order, with ids that increase in that order, in one statement; a
   * chunk whose `seq` the job already holds is skipped (a retried batch is stored once). Adds the
   * bytes of the chunks it stored to the job's usage and returns them, in order.
   */
  appendMany(ownerId: string, jobId: string, chunks: readonly NewLogChunk[], at: string): Promise<LogChunk[]>;
  /** Records that the job's log was cut: `usage` says so from then on. */
  markCut(ownerId: string, jobId: string): Promise<void>;
  /** Chunks of the job with id greater than `after`, ordered by id, at most `limit`. */
  list(ownerId: string, jobId: string, after: number, limit: number): Promise<LogChunk[]>;
  /**
   * Deletes at most `limit` chunks of jobs (of every owner) finished before `cutoff`, in no
   * particular order, and returns how many it deleted; callers repeat while it returns `limit`.
   * A job whose chunks are all gone holds no log bytes any more (`usage().bytes` is 0), so later
   * calls skip it instead of walking every job that ever finished.
   */
  deleteOfJobsFinishedBefore(cutoff: string, limit: number): Promise<number>;
}
