import { TrellisApiError, TrellisConnectionError } from '@trellis/client';
import type { JobStatus, LogChunk, StreamType } from '@trellis/core';
import type { LogApi } from '../../src/logs/LogShipper.js';

export type Fault = 'refuse' | 'lose-answer' | 'server-error' | 'gone' | 'closed' | 'cut';

/** A job log on a pretend control plane, with faults scheduled per post. */
export class FakeLogApi implements LogApi {
  readonly stored: LogChunk[] = [];
  readonly faults: Fault[] = [];
  lastSeq = 0;
  status: JobStatus = 'PROCESSING';
  posts = 0;

  /** As the control plane: a seq it holds is skipped, a batch past the next seq is refused. */
  async appendLogBatch(
    jobId: string,
    chunks: ReadonlyArray<{ seq: number; log_chunk: string; stream_type: StreamType }>,
  ) {
    this.posts += 1;
    await Promise.resolve();
    const fault = this.faults.shift();
    if (fault === 'refuse') throw new TrellisConnectionError('http://fake', new Error('ECONNREFUSED'));
    if (fault === 'server-error') throw new TrellisApiError({ status: 503, code: 'unavailable' });
    if (fault === 'gone') throw new TrellisApiError({ status: 409, code: 'job_finished' });
    if (fault === 'closed') throw new TrellisApiError({ status: 409, code: 'job_log_closed' });
    if (fault === 'cut') throw new TrellisApiError({ status: 413, code: 'job_log_truncated' });
    const first = chunks[0]?.seq ?? 1;
    if (first > this.lastSeq + 1) {
      throw new TrellisApiError({ status: 409, code: 'log_seq_gap', expected_seq: this.lastSeq + 1 });
    }
    let stored = 0;
    for (const chunk of chunks) {
      if (chunk.seq <= this.lastSeq) continue;
      this.lastSeq = chunk.seq;
      stored += 1;
      this.stored.push({
        id: this.stored.length + 1,
        job_id: jobId,
        log_chunk: chunk.log_chunk,
        stream_type: chunk.stream_type,
        created_at: new Date().toISOString(),
      });
    }
    if (fault === 'lose-answer') throw new TrellisConnectionError('http://fake', new Error('ECONNRESET'));
    return { last_seq: this.lastSeq, stored, job_status: this.status };
  }

  /** Loses the last `count` chunks it stored, as a database that lost its last commits does. */
  forget(count: number): void {
    this.stored.splice(-count, count);
    this.lastSeq -= count;
  }

  text(stream?: StreamType): string {
    return this.stored
      .filter((log) => stream === undefined || log.stream_type === stream)
      .map((log) => log.log_chunk)
      .join('');
  }
}
