import type { UserActor, WorkerActor } from '../domain/actors.js';
import { isOneOf, type JobStatus, STREAM_TYPES } from '../domain/enums.js';
import { ConflictError, ForbiddenError, NotFoundError, TooLargeError, ValidationError } from '../domain/errors.js';
import type { Job, LogChunk } from '../domain/records.js';
import { requireUuid } from '../domain/validation.js';
import { ownerScope, type Scope, systemScope } from '../ports/UnitOfWork.js';
import { Access } from './Access.js';
import { announce, type CoreDeps, isoNow, isoSecondsBefore } from './CoreDeps.js';

/** DESIGN §4 log limits. */
export const MAX_LOG_CHUNK_BYTES = 1024 * 1024;
export const DEFAULT_LOG_PAGE = 1000;
export const MAX_LOG_PAGE = 5000;

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
function logWindow(job: Job, now: Date, graceMinutes: number): 'open' | 'finished' | 'closed' {
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
    if (typeof input.log_chunk !== 'string') {
      throw new ValidationError('log_chunk must be a string', [{ path: 'log_chunk', message: 'must be a string' }]);
    }
    if (!isOneOf(STREAM_TYPES, input.stream_type)) {
      throw new ValidationError(`stream_type must be one of ${STREAM_TYPES.join(', ')}`, [
        { path: 'stream_type', message: `must be one of ${STREAM_TYPES.join(', ')}` },
      ]);
    }
    if (Buffer.byteLength(input.log_chunk, 'utf8') > MAX_LOG_CHUNK_BYTES) {
      throw new TooLargeError('log_chunk_too_large', 'a log chunk must be at most 1 MiB', MAX_LOG_CHUNK_BYTES);
    }
    const chunkText = input.log_chunk;
    const streamType = input.stream_type;
    const chunkBytes = Buffer.byteLength(chunkText, 'utf8');
    const maxLogBytes = this.deps.settings.maxLogBytesPerJob;
    const { chunk, status, cut } = await this.deps.uow.run<{
      chunk: LogChunk | null;
      status: JobStatus;
      cut: boolean;
    }>(ownerScope(worker.ownerId), async (stores) => {
      const job = await stores.jobs.get(worker.ownerId, jobId);
      if (!job) throw new NotFoundError('job');
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
      const usage = await stores.logs.usage(worker.ownerId, jobId);
      if (usage.cut) return { chunk: null, status: job.status, cut: true };
      const at = isoNow(this.deps);
      if (usage.bytes + chunkBytes > maxLogBytes) {
        // The notice is the log's last line, stored although it passes the cap it reports.
        const notice = await stores.logs.append(worker.ownerId, jobId, logCutNotice(maxLogBytes), 'SYSTEM', at);
        await stores.logs.markCut(worker.ownerId, jobId);
        return { chunk: notice, status: job.status, cut: true };
      }
      const stored = await stores.logs.append(worker.ownerId, jobId, chunkText, streamType, at);
      return { chunk: stored, status: job.status, cut: false };
    });
    if (chunk) {
      await announce(this.deps.events, {
        type: 'log_appended',
        owner_id: worker.ownerId,
        job_id: jobId,
        chunk_id: chunk.id,
      });
    }
    if (cut) {
      throw new TooLargeError(
        'job_log_truncated',
        `the log of this job reached its limit of ${maxLogBytes} bytes and was cut; it takes no more chunks`,
        maxLogBytes,
      );
    }
    return { id: (chunk as LogChunk).id, job_status: status };
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
