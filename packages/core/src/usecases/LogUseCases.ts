import type { WorkerActor } from '../domain/actors.js';
import { isOneOf, type JobStatus, STREAM_TYPES } from '../domain/enums.js';
import { ConflictError, ForbiddenError, NotFoundError, TooLargeError, ValidationError } from '../domain/errors.js';
import type { LogChunk } from '../domain/records.js';
import { requireUuid } from '../domain/validation.js';
import { ownerScope } from '../ports/UnitOfWork.js';
import { announce, type CoreDeps, isoNow } from './CoreDeps.js';

/** DESIGN §4 log limits. */
export const MAX_LOG_CHUNK_BYTES = 1024 * 1024;
export const DEFAULT_LOG_PAGE = 1000;
export const MAX_LOG_PAGE = 5000;

export interface LogPage {
  logs: LogChunk[];
  has_more: boolean;
}

/** Chunks are accepted while the job runs and after a cancel, while the engine winds down. */
const ACCEPTS_LOGS: readonly JobStatus[] = ['PROCESSING', 'CANCELLED'];

export class LogUseCases {
  constructor(private readonly deps: CoreDeps) {}

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
    const { chunk, status } = await this.deps.uow.run(ownerScope(worker.ownerId), async (stores) => {
      const job = await stores.jobs.get(worker.ownerId, jobId);
      if (!job) throw new NotFoundError('job');
      if (job.claimed_by_worker_id !== worker.workerId) {
        throw new ForbiddenError('job_not_claimed_by_worker', 'this job was not claimed by this worker');
      }
      if (!ACCEPTS_LOGS.includes(job.status)) {
        throw new ConflictError('job_finished', `the job is ${job.status}; it takes no more logs`);
      }
      const stored = await stores.logs.append(worker.ownerId, jobId, chunkText, streamType, isoNow(this.deps));
      return { chunk: stored, status: job.status };
    });
    await announce(this.deps.events, {
      type: 'log_appended',
      owner_id: worker.ownerId,
      job_id: jobId,
      chunk_id: chunk.id,
    });
    return { id: chunk.id, job_status: status };
  }

  /** Logs of a job of `ownerId`, ordered by id, after `after`, at most `limit` (DESIGN §4). */
  async read(ownerId: string, id: unknown, query: { after?: unknown; limit?: unknown } = {}): Promise<LogPage> {
    const jobId = requireUuid(id, 'id');
    const after = parseInteger(query.after, 'after', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = parseInteger(query.limit, 'limit', DEFAULT_LOG_PAGE, 1, MAX_LOG_PAGE);
    return this.deps.uow.run(ownerScope(ownerId), async (stores) => {
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
