import { type LogChunk, type LogStore, NotFoundError, type StreamType } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryLogStore implements LogStore {
  constructor(private readonly tx: MemoryTransaction) {}

  /** Ids come from a sequence that never rolls back, so they only increase, as in SQL. */
  async append(ownerId: string, jobId: string, chunk: string, streamType: StreamType, at: string): Promise<LogChunk> {
    const { logs, jobs } = this.tx.state;
    const job = jobs.get(jobId);
    // As the SQL stores' foreign key and owner check: only a job of this owner takes chunks.
    if (!job || job.owner_id !== ownerId || !this.tx.sees(ownerId)) throw new NotFoundError('job');
    const stored: LogChunk = {
      id: this.tx.sequences.nextLogId++,
      job_id: jobId,
      log_chunk: chunk,
      stream_type: streamType,
      created_at: at,
    };
    logs.push({ owner_id: ownerId, chunk: stored });
    return copy(stored);
  }

  async list(ownerId: string, jobId: string, after: number, limit: number): Promise<LogChunk[]> {
    if (!this.tx.sees(ownerId) || limit <= 0) return [];
    return this.tx.state.logs
      .filter((row) => row.owner_id === ownerId && row.chunk.job_id === jobId && row.chunk.id > after)
      .map((row) => row.chunk)
      .sort((a, b) => a.id - b.id)
      .slice(0, limit)
      .map(copy);
  }
}
