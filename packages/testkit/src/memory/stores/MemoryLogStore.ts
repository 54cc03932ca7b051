import {
  type LogAppendState,
  type LogChunk,
  type LogStore,
  type LogUsage,
  type NewLogChunk,
  NotFoundError,
  type StreamType,
} from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryLogStore implements LogStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async usage(ownerId: string, jobId: string): Promise<LogUsage> {
    this.requireJob(ownerId, jobId);
    const seqs = this.tx.state.logs.filter((row) => row.chunk.job_id === jobId).map((row) => row.seq ?? 0);
    return { ...(this.tx.state.logUsage.get(jobId) ?? { bytes: 0, cut: false }), lastSeq: Math.max(0, ...seqs) };
  }

  async lockForAppend(ownerId: string, jobId: string, firstSeq: number | null): Promise<LogAppendState | null> {
    const job = this.tx.state.jobs.get(jobId);
    if (!job || job.owner_id !== ownerId || !this.tx.sees(ownerId)) return null;
    const { status, claimed_by_worker_id, finished_at } = job;
    const { bytes, cut, lastSeq } = await this.usage(ownerId, jobId);
    return {
      job: { status, claimed_by_worker_id, finished_at },
      bytes,
      cut,
      lastSeq: firstSeq === null ? null : lastSeq,
    };
  }

  async markCut(ownerId: string, jobId: string): Promise<void> {
    this.requireJob(ownerId, jobId);
    const usage = this.tx.state.logUsage.get(jobId) ?? { bytes: 0, cut: false };
    this.tx.state.logUsage.set(jobId, { ...usage, cut: true });
  }

  async deleteOfJobsFinishedBefore(cutoff: string, limit: number): Promise<number> {
    const { logs, jobs, logUsage } = this.tx.state;
    const before = Date.parse(cutoff);
    // As the SQL stores: only jobs that still hold log bytes, oldest finished first.
    const jobIds = [...jobs.values()]
      .filter(
        (job) =>
          this.tx.sees(job.owner_id) &&
          job.finished_at != null &&
          Date.parse(job.finished_at) < before &&
          (logUsage.get(job.id)?.bytes ?? 0) > 0,
      )
      .sort((a, b) => Date.parse(a.finished_at as string) - Date.parse(b.finished_at as string))
      .slice(0, 100)
      .map((job) => job.id);
    const chosen = new Set(jobIds);
    const doomed = new Set(
      logs
        .filter((row) => chosen.has(row.chunk.job_id))
        .map((row) => row.chunk.id)
        .sort((a, b) => a - b)
        .slice(0, Math.max(0, limit)),
    );
    this.tx.state.logs = logs.filter((row) => !doomed.has(row.chunk.id));
    if (doomed.size < limit) {
      for (const id of jobIds) {
        const usage = logUsage.get(id);
        if (usage) logUsage.set(id, { ...usage, bytes: 0 });
      }
    }
    return doomed.size;
  }

  private requireJob(ownerId: string, jobId: string): void {
    const job = this.tx.state.jobs.get(jobId);
    if (!job || job.owner_id !== ownerId || !this.tx.sees(ownerId)) throw new NotFoundError('job');
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

  /** Ids come from a sequence that never rolls back, so they only increase, as in SQL. */
  async appendMany(ownerId: string, jobId: string, chunks: readonly NewLogChunk[], at: string): Promise<LogChunk[]> {
    const { logs, jobs } = this.tx.state;
    const job = jobs.get(jobId);
    // As the SQL stores' foreign key and owner check: only a job of this owner takes chunks.
    if (!job || job.owner_id !== ownerId || !this.tx.sees(ownerId)) throw new NotFoundError('job');
    const held = new Set(logs.filter((row) => row.chunk.job_id === jobId && row.seq != null).map((row) => row.seq));
    const stored: LogChunk[] = [];
    let bytes = 0;
    for (const chunk of chunks) {
      // As the unique (job_id, seq) index with ON CONFLICT DO NOTHING: a repeated seq is skipped.
      if (chunk.seq !== null && held.has(chunk.seq)) continue;
      if (chunk.seq !== null) held.add(chunk.seq);
      const row: LogChunk = {
        id: this.tx.sequences.nextLogId++,
        job_id: jobId,
        log_chunk: chunk.log_chunk,
        stream_type: chunk.stream_type,
        created_at: at,
      };
      logs.push({ owner_id: ownerId, seq: chunk.seq, chunk: row });
      stored.push(copy(row));
      bytes += Buffer.byteLength(chunk.log_chunk, 'utf8');
    }
    const usage = this.tx.state.logUsage.get(jobId) ?? { bytes: 0, cut: false };
    this.tx.state.logUsage.set(jobId, { ...usage, bytes: usage.bytes + bytes });
    return stored;
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
