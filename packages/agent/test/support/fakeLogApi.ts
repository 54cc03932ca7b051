import { TrellisApiError, TrellisConnectionError } from '@trellis/client';
import type { JobStatus, LogChunk, StreamType } from '@trellis/core';
import type { LogApi } from '../../src/logs/LogShipper.js';

export type Fault = 'refuse' | 'lose-answer' | 'server-error' | 'gone' | 'closed' | 'cut';

/** A job log on a pretend control plane, with faults scheduled per post. */
export class FakeLogApi implements LogApi {
  readonly stored: LogChunk[] = [];
  readonly faults: Fault[] = [];
  readFaults = 0;
  status: JobStatus = 'PROCESSING';
  posts = 0;

  async appendLog(jobId: string, chunk: string, stream: StreamType) {
    this.posts += 1;
    await Promise.resolve();
    const fault = this.faults.shift();
    if (fault === 'refuse') throw new TrellisConnectionError('http://fake', new Error('ECONNREFUSED'));
    if (fault === 'server-error') throw new TrellisApiError({ status: 503, code: 'unavailable' });
    if (fault === 'gone') throw new TrellisApiError({ status: 409, code: 'job_finished' });
    if (fault === 'closed') throw new TrellisApiError({ status: 409, code: 'job_log_closed' });
    if (fault === 'cut') throw new TrellisApiError({ status: 413, code: 'job_log_truncated' });
    const entry: LogChunk = {
      id: this.stored.length + 1,
      job_id: jobId,
      log_chunk: chunk,
      stream_type: stream,
      created_at: new Date().toISOString(),
    };
    this.stored.push(entry);
    if (fault === 'lose-answer') throw new TrellisConnectionError('http://fake', new Error('ECONNRESET'));
    return { id: entry.id, job_status: this.status };
  }

  async readLogs(_jobId: string, page: { after?: number; limit?: number }) {
    if (this.readFaults > 0) {
      this.readFaults -= 1;
      throw new TrellisConnectionError('http://fake', new Error('ECONNREFUSED'));
    }
    const logs = this.stored.filter((log) => log.id > (page.after ?? 0)).slice(0, page.limit ?? 1000);
    return { logs, has_more: false };
  }

  text(stream?: StreamType): string {
    return this.stored
      .filter((log) => stream === undefined || log.stream_type === stream)
      .map((log) => log.log_chunk)
      .join('');
  }
}
