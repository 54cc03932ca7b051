import type { UserActor, WorkerActor } from '../domain/actors.js';
import { isOneOf, type JobStatus, STREAM_TYPES } from '../domain/enums.js';
import {
  ConflictError,
  ForbiddenError,
  LogSeqGapError,
  NotFoundError,
  TooLargeError,
  ValidationError,
} from '../domain/errors.js';
import type { Job, LogChunk } from '../domain/records.js';
import { requireUuid } from '../domain/validation.js';
import type { NewLogChunk } from '../ports/LogStore.js';
import { ownerScope, type Scope, systemScope } from '../ports/UnitOfWork.js';
import { Access } from './Access.js';
import { announce, type CoreDeps, isoNow, isoSecondsBefore } from './CoreDeps.js';

/** DESIGN §4 log limits. */
export const MAX_LOG_CHUNK_BYTES = 1024 * 1024;
export const DEFAULT_LOG_PAGE = 1000;
export const MAX_LOG_PAGE = 5000;
/** Issue 17: a batch of `POST /api/jobs/{id}/logs`, bounded in chunks and in bytes. */
export const MAX_LOG_BATCH_CHUNKS = 1000;
export const MAX_LOG_BATCH_BYTES = 4 * 1024 * 1024;

export interface LogPage {
  logs: LogChunk[];
  has_more: boolean;
}

/** How many chunks one retention pass deletes per statement, and how many statements at most. */
const LOG_RETENTION_BATCH = 5000;
const LOG_RETENTION_MAX_BATCHES = 100;

/**
 * Whether a job takes log chunks now: while it runs, and after a cancel for the grace period, while
 * the engine winds down and the agent flushes its last lines. A job that ended otherwise was ended
 * by its agent, which ships its log first.
 */
function logWindow(
  job: Pick<Job, 'status' | 'finished_at'>,
  now: Date,
  graceMinutes: number,
): 'open' | 'finished' | 'closed' {
  if (job.status === 'PROCESSING') return 'open';
  if (job.status !== 'CANCELLED') return 'finished';
  const finished = job.finished_at === null ? now.getTime() : Date.parse(job.finished_at);
  return now.getTime() <= finished + graceMinutes * 60_000 ? 'open' : 'closed';
}

/** The `SYSTEM` line that ends a log cut at the per-job cap. */
function logCutNotice(maxBytes: number): string {
  return `[trellis] the log of this job was cut: it reached the limit of ${maxBytes} bytes; later output was not kept\n`;
}

export class LogUseCases {
  private readonly access: Access;

  constructor(private readonly deps: CoreDeps) {
    this.access = new Access(deps);
  }

  /** `POST /api/jobs/{id}/logs`: the answer carries the job status so the agent learns of a cancel. */
  async append(
    worker: WorkerActor,
    id: unknown,
    input: { log_chunk: unknown; stream_type: unknown },
  ): Promise<{ id: number; job_status: JobStatus }> {
    const jobId = requireUuid(id, 'id');
    const { stored, status } = await this.store(worker, jobId, [parseChunk(input, '', null)]);
    return { id: (stored.at(-1) as LogChunk).id, job_status: status };
  }

  /**
   * `POST /api/jobs/{id}/logs` with `chunks`: a batch of consecutive agent sequence numbers, stored
   * in one statement. Chunks whose `seq` the log already holds are skipped, so a retried batch is
   * stored once; a batch that starts past the next expected `seq` is refused (`log_seq_gap`) so the
   * log's ids keep the agent's order and readers paging by id see it as written.
   */
  async appendBatch(
    worker: WorkerActor,
    id: unknown,
    input: { chunks: unknown },
  ): Promise<{ last_seq: number; stored: number; job_status: JobStatus }> {
    const jobId = requireUuid(id, 'id');
    const chunks = parseBatch(input.chunks);
    const { stored, status, lastSeq } = await this.store(worker, jobId, chunks);
    return { last_seq: lastSeq, stored: stored.length, job_status: status };
  }

  /** Stores `chunks` (in order, all or up to the cap) in one unit of work and announces them once. */
  private async store(
    worker: WorkerActor,
    jobId: string,
    chunks: readonly SizedChunk[],
  ): Promise<{ stored: LogChunk[]; status: JobStatus; lastSeq: number }> {
    const maxLogBytes = this.deps.settings.maxLogBytesPerJob;
    const { stored, status, cut, lastSeq } = await this.deps.uow.run<{
      stored: LogChunk[];
      status: JobStatus;
      cut: boolean;
      lastSeq: number;
    }>(ownerScope(worker.ownerId), async (stores) => {
      // The job and its log usage in one read, under the job's lock: appends to a job count in turn.
      const firstSeq = chunks[0]?.chunk.seq ?? null;
      const state = await stores.logs.lockForAppend(worker.ownerId, jobId, firstSeq);
      if (!state) throw new NotFoundError('job');
      const { job } = state;
      const lastSeqBefore = state.lastSeq ?? 0;
      if (job.claimed_by_worker_id !== worker.workerId) {
        throw new ForbiddenError('job_not_claimed_by_worker', 'this job was not claimed by this worker');
      }
      const window = logWindow(job, this.deps.clock.now(), this.deps.settings.logGraceMinutes);
      if (window === 'finished') {
        throw new ConflictError('job_finished', `the job is ${job.status}; it takes no more logs`);
      }
      if (window === 'closed') {
        throw new ConflictError(
          'job_log_closed',
          `the job ended more than ${this.deps.settings.logGraceMinutes} minutes ago; its log is closed`,
        );
      }
      if (state.cut) return { stored: [], status: job.status, cut: true, lastSeq: lastSeqBefore };
      if (firstSeq !== null && firstSeq > lastSeqBefore + 1) {
        throw new LogSeqGapError(lastSeqBefore + 1, firstSeq);
      }
      const fitting: NewLogChunk[] = [];
      let bytes = state.bytes;
      let lastSeq = lastSeqBefore;
      let cutNow = false;
      for (const { chunk, bytes: chunkBytes } of chunks) {
        // The log holds every seq up to lastSeq (no gaps are taken), so those are a retry's repeats.
        if (chunk.seq !== null && chunk.seq <= lastSeqBefore) continue;
        bytes += chunkBytes;
        if (bytes > maxLogBytes) {
          cutNow = true;
          break;
        }
        fitting.push(chunk);
        if (chunk.seq !== null) lastSeq = Math.max(lastSeq, chunk.seq);
      }
      // The notice is the log's last line, stored although it passes the cap it reports.
      const rows = cutNow
        ? [...fitting, { seq: null, log_chunk: logCutNotice(maxLogBytes), stream_type: 'SYSTEM' as const }]
        : fitting;
      const stored =
        rows.length > 0 ? await stores.logs.appendMany(worker.ownerId, jobId, rows, isoNow(this.deps)) : [];
      if (cutNow) await stores.logs.markCut(worker.ownerId, jobId);
      return { stored, status: job.status, cut: cutNow, lastSeq };
    });
    const last = stored.at(-1);
    if (last) {
      await announce(this.deps.events, {
        type: 'log_appended',
        owner_id: worker.ownerId,
        job_id: jobId,
        chunk_id: last.id,
      });
    }
    if (cut) {
      throw new TooLargeError(
        'job_log_truncated',
        `the log of this job reached its limit of ${maxLogBytes} bytes and was cut; it takes no more chunks`,
        maxLogBytes,
      );
    }
    return { stored, status, lastSeq };
  }

  /**
   * Retention: deletes the logs of jobs finished more than `logRetentionDays` ago (0: never), in
   * batches of their own units of work so no statement holds a long lock. Returns how many chunks
   * it deleted; a pass stops after `LOG_RETENTION_MAX_BATCHES` and the next one carries on.
   */
  async deleteExpired(): Promise<number> {
    const days = this.deps.settings.logRetentionDays;
    if (days <= 0) return 0;
    const cutoff = isoSecondsBefore(this.deps.clock.now(), days * 86_400);
    let total = 0;
    for (let batch = 0; batch < LOG_RETENTION_MAX_BATCHES; batch += 1) {
      const deleted = await this.deps.uow.run(systemScope, (stores) =>
        stores.logs.deleteOfJobsFinishedBefore(cutoff, LOG_RETENTION_BATCH),
      );
      total += deleted;
      if (deleted < LOG_RETENTION_BATCH) break;
    }
    return total;
  }

  /** Logs of a job the person may read, ordered by id, after `after`, at most `limit` (DESIGN §4). */
  async readForPerson(
    user: UserActor,
    id: unknown,
    query: { after?: unknown; limit?: unknown } = {},
  ): Promise<LogPage> {
    const jobId = requireUuid(id, 'id');
    const { record, scope } = await this.access.locate(user, 'read', 'job_not_found', (stores, ownerId) =>
      stores.jobs.get(ownerId, jobId),
    );
    return this.readIn(scope, record.owner_id, jobId, query);
  }

  /** Logs of a job of `ownerId` (an agent reads its owner's). */
  async read(ownerId: string, id: unknown, query: { after?: unknown; limit?: unknown } = {}): Promise<LogPage> {
    return this.readIn(ownerScope(ownerId), ownerId, requireUuid(id, 'id'), query);
  }

  private async readIn(
    scope: Scope,
    ownerId: string,
    jobId: string,
    query: { after?: unknown; limit?: unknown },
  ): Promise<LogPage> {
    const after = parseInteger(query.after, 'after', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = parseInteger(query.limit, 'limit', DEFAULT_LOG_PAGE, 1, MAX_LOG_PAGE);
    return this.deps.uow.run(scope, async (stores) => {
      const job = await stores.jobs.get(ownerId, jobId);
      if (!job) throw new NotFoundError('job');
      const logs = await stores.logs.list(ownerId, jobId, after, limit + 1);
      return { logs: logs.slice(0, limit), has_more: logs.length > limit };
    });
  }
}

/** A chunk of a request and its size in UTF-8 bytes, counted once for every limit it meets. */
interface SizedChunk {
  chunk: NewLogChunk;
  bytes: number;
}

/** A chunk of a request: `path` prefixes the field names in errors (`chunks.3.`). */
function parseChunk(
  input: { log_chunk?: unknown; stream_type?: unknown },
  path: string,
  seq: number | null,
): SizedChunk {
  if (typeof input.log_chunk !== 'string') {
    throw new ValidationError(`${path}log_chunk must be a string`, [
      { path: `${path}log_chunk`, message: 'must be a string' },
    ]);
  }
  if (!isOneOf(STREAM_TYPES, input.stream_type)) {
    throw new ValidationError(`${path}stream_type must be one of ${STREAM_TYPES.join(', ')}`, [
      { path: `${path}stream_type`, message: `must be one of ${STREAM_TYPES.join(', ')}` },
    ]);
  }
  const bytes = Buffer.byteLength(input.log_chunk, 'utf8');
  if (bytes > MAX_LOG_CHUNK_BYTES) {
    throw new TooLargeError('log_chunk_too_large', 'a log chunk must be at most 1 MiB', MAX_LOG_CHUNK_BYTES);
  }
  return { chunk: { seq, log_chunk: input.log_chunk, stream_type: input.stream_type }, bytes };
}

/** A batch: 1 to `MAX_LOG_BATCH_CHUNKS` chunks of consecutive `seq` (from 1), `MAX_LOG_BATCH_BYTES` in all. */
function parseBatch(input: unknown): SizedChunk[] {
  if (!Array.isArray(input) || input.length === 0) {
    throw new ValidationError('chunks must be a non-empty array', [
      { path: 'chunks', message: 'must be a non-empty array' },
    ]);
  }
  if (input.length > MAX_LOG_BATCH_CHUNKS) {
    const message = `must hold at most ${MAX_LOG_BATCH_CHUNKS} chunks`;
    throw new ValidationError(`chunks ${message}`, [{ path: 'chunks', message }]);
  }
  const chunks: SizedChunk[] = [];
  let bytes = 0;
  for (const [index, item] of input.entries()) {
    const path = `chunks.${index}.`;
    const record = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    const seq = record.seq;
    const expected = index === 0 ? null : (chunks[0]?.chunk.seq as number) + index;
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1 || (expected !== null && seq !== expected)) {
      const message =
        expected === null ? 'must be a positive integer' : `must be ${expected}: seqs of a batch are consecutive`;
      throw new ValidationError(`${path}seq ${message}`, [{ path: `${path}seq`, message }]);
    }
    const chunk = parseChunk(record, path, seq);
    bytes += chunk.bytes;
    if (bytes > MAX_LOG_BATCH_BYTES) {
      throw new TooLargeError(
        'log_batch_too_large',
        `a log batch holds at most ${MAX_LOG_BATCH_BYTES} bytes of chunks`,
        MAX_LOG_BATCH_BYTES,
      );
    }
    chunks.push(chunk);
  }
  return chunks;
}

function parseInteger(value: unknown, field: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const number =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    throw new ValidationError(`${field} must be an integer from ${min} to ${max}`, [
      { path: field, message: `must be an integer from ${min} to ${max}` },
    ]);
  }
  return number;
}
