import type { JobStatus, LogPage, StreamType } from '@trellis/core';
import { Backoff, isTransient, type RetryClock, retry, systemClock, TrellisApiError } from '@trellis/client';
import { type AgentLogger, describeError } from '../logging/AgentLogger.js';

/** The part of the client the shipper uses. */
export interface LogApi {
  appendLog(jobId: string, chunk: string, stream: StreamType): Promise<{ id: number; job_status: JobStatus }>;
  readLogs(jobId: string, page: { after?: number; limit?: number }): Promise<LogPage>;
}

export interface LogShipperOptions {
  api: LogApi;
  jobId: string;
  logger: AgentLogger;
  /** Called with the job status of every acknowledged chunk (`CANCELLED` means stop). */
  onJobStatus?: (status: JobStatus) => void;
  /** Called once when the server says the job takes no more logs from this agent. */
  onJobGone?: (error: TrellisApiError) => void;
  /** Under the server's 1 MiB limit, with room to spare. */
  maxChunkBytes?: number;
  /** Above this many queued bytes the producer is asked to wait. */
  highWaterBytes?: number;
  backoff?: Backoff;
  /** Time for the retries; the real clock by default. */
  clock?: RetryClock;
}

/** A run of one stream: the pieces as appended, so no huge string is ever built or re-sliced. */
interface Segment {
  stream: StreamType;
  parts: Array<{ text: string; bytes: number }>;
}

/** What the next post carries: whole pieces of the head segment, or a cut of its first piece. */
interface Chunk {
  stream: StreamType;
  text: string;
  bytes: number;
  wholeParts: number;
}

export interface ShipperStats {
  requests: number;
  chunks: number;
  bytes: number;
  retries: number;
  duplicatesAvoided: number;
}

/**
 * Ships a job's log to the control plane in order: text is queued per stream, cut into chunks
 * of at most `maxChunkBytes` (at a line end when one is near), and posted one at a time. A post
 * that fails in transit may still have landed, and the server has no idempotency key, so before
 * posting it again the shipper reads the log after the last acknowledged chunk and takes the
 * chunk as delivered if it is there: every chunk is stored exactly once.
 */
export class LogShipper {
  private readonly queue: Segment[] = [];
  private queuedBytes = 0;
  private running: Promise<void> | null = null;
  private lastAckedId = 0;
  private gone = false;
  /** The server cut the job's log at its cap: the job runs on, its log takes no more. */
  private logWasCut = false;
  private deadline = Number.POSITIVE_INFINITY;
  private readonly abandon = new AbortController();
  private waiters: Array<() => void> = [];
  private readonly maxChunkBytes: number;
  private readonly highWaterBytes: number;
  private readonly backoff: Backoff;
  readonly stats: ShipperStats = { requests: 0, chunks: 0, bytes: 0, retries: 0, duplicatesAvoided: 0 };

  constructor(private readonly options: LogShipperOptions) {
    this.maxChunkBytes = options.maxChunkBytes ?? 512 * 1024;
    this.highWaterBytes = options.highWaterBytes ?? 8 * 1024 * 1024;
    this.backoff = options.backoff ?? new Backoff({ initialMs: 500, maxMs: 10_000 });
  }

  /** Queues text; a full chunk's worth starts shipping at once, the rest waits for `flush()`. */
  append(stream: StreamType, text: string): void {
    if (text === '' || this.gone || this.logWasCut) return;
    const part = { text, bytes: Buffer.byteLength(text) };
    const last = this.queue.at(-1);
    if (last && last.stream === stream) last.parts.push(part);
    else this.queue.push({ stream, parts: [part] });
    this.queuedBytes += part.bytes;
    if (this.queuedBytes >= this.maxChunkBytes) void this.flush();
  }

  /** True while the producer should stop reading its source. */
  get full(): boolean {
    return !this.gone && !this.logWasCut && this.queuedBytes > this.highWaterBytes;
  }

  /** Resolves once the queue is back under half the high-water mark. */
  waitForRoom(): Promise<void> {
    if (!this.full) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  get pendingBytes(): number {
    return this.queuedBytes;
  }

  /** True once the server refused further logs for the job. */
  get jobGone(): boolean {
    return this.gone;
  }

  /** True once the server cut the job's log at its size limit (the job itself goes on). */
  get logCut(): boolean {
    return this.logWasCut;
  }

  /** Ships everything queued (and whatever is appended meanwhile). */
  flush(): Promise<void> {
    if (!this.running) {
      this.running = this.shipQueued().finally(() => {
        this.running = null;
      });
    }
    return this.running;
  }

  /**
   * Ships what is left, retrying for at most `timeoutMs`; after that the rest is given up (and
   * said so in the agent's log) so the job's status can still be reported.
   */
  async close(timeoutMs = 5 * 60_000): Promise<void> {
    const clock = this.options.clock ?? systemClock;
    this.deadline = clock.now().getTime() + timeoutMs;
    const closed = new AbortController();
    void clock.sleep(timeoutMs, closed.signal).then((expired) => {
      if (expired) this.abandon.abort();
    });
    try {
      await this.flush();
      if (this.queue.length > 0) await this.flush();
    } finally {
      closed.abort();
    }
    if (this.queuedBytes > 0) {
      this.options.logger.error('gave up shipping the rest of the job log', { pending_bytes: this.queuedBytes });
      this.drop();
    }
  }

  private async shipQueued(): Promise<void> {
    while (this.queue.length > 0 && !this.gone && !this.logWasCut) {
      const chunk = this.peekChunk();
      const delivered = await this.deliver(chunk);
      if (!delivered) return;
      this.consume(chunk);
    }
  }

  /** The next chunk: the head segment's first pieces, at most `maxChunkBytes` bytes together. */
  private peekChunk(): Chunk {
    const head = this.queue[0] as Segment;
    const texts: string[] = [];
    let bytes = 0;
    for (const part of head.parts) {
      if (bytes + part.bytes > this.maxChunkBytes) break;
      texts.push(part.text);
      bytes += part.bytes;
    }
    if (texts.length > 0) return { stream: head.stream, text: texts.join(''), bytes, wholeParts: texts.length };
    const text = this.cut((head.parts[0] as { text: string }).text);
    return { stream: head.stream, text, bytes: Buffer.byteLength(text), wholeParts: 0 };
  }

  /** A prefix of one long piece under the limit: at a line end when one is near, never inside a character. */
  private cut(text: string): string {
    const window = Buffer.from(text.slice(0, this.maxChunkBytes), 'utf8');
    let end = Math.min(window.length, this.maxChunkBytes);
    while (end > 0 && ((window[end] as number) & 0xc0) === 0x80) end -= 1;
    const prefix = window.subarray(0, end).toString('utf8');
    const newline = prefix.lastIndexOf('\n');
    return newline >= prefix.length / 2 ? prefix.slice(0, newline + 1) : prefix;
  }

  private consume(chunk: Chunk): void {
    const head = this.queue[0] as Segment;
    if (chunk.wholeParts > 0) head.parts.splice(0, chunk.wholeParts);
    else {
      const first = head.parts[0] as { text: string; bytes: number };
      first.text = first.text.slice(chunk.text.length);
      first.bytes -= chunk.bytes;
    }
    if (head.parts.length === 0 || (head.parts.length === 1 && head.parts[0]?.text === '')) this.queue.shift();
    this.queuedBytes -= chunk.bytes;
    this.stats.chunks += 1;
    this.stats.bytes += chunk.bytes;
    this.wakeWaiters();
  }

  /** Posts one chunk until it is stored; false when the job takes no more logs or time ran out. */
  private async deliver(chunk: Chunk): Promise<boolean> {
    const clock = this.options.clock ?? systemClock;
    try {
      await retry(
        async (attempt) => {
          // After a failed post the chunk may have been stored anyway: look before posting again.
          if (attempt > 0) {
            const landed = await this.findLanded(chunk);
            if (landed !== null) {
              this.stats.duplicatesAvoided += 1;
              this.acknowledge(landed, null);
              return;
            }
          }
          this.stats.requests += 1;
          const answer = await this.options.api.appendLog(this.options.jobId, chunk.text, chunk.stream);
          this.acknowledge(answer.id, answer.job_status);
        },
        {
          clock,
          backoff: this.backoff,
          signal: this.abandon.signal,
          timeoutMs: this.deadline - clock.now().getTime(),
          onRetry: (error, delay) => {
            this.stats.retries += 1;
            this.options.logger.warn('log post failed; retrying', { error: describeError(error), retry_in_ms: delay });
          },
        },
      );
      return true;
    } catch (error) {
      if (!isTransient(error)) return this.refused(error, chunk);
      return false; // out of time, or abandoned
    }
  }

  /** The id of the chunk if an earlier attempt stored it (it can only be right after the last ack). */
  private async findLanded(chunk: Chunk): Promise<number | null> {
    this.stats.requests += 1;
    const page = await this.options.api.readLogs(this.options.jobId, { after: this.lastAckedId, limit: 20 });
    const match = page.logs.find((log) => log.stream_type === chunk.stream && log.log_chunk === chunk.text);
    return match ? match.id : null;
  }

  private acknowledge(id: number, status: JobStatus | null): void {
    this.lastAckedId = Math.max(this.lastAckedId, id);
    this.backoff.reset();
    if (status) this.options.onJobStatus?.(status);
  }

  /** A refusal that retrying cannot fix. */
  private refused(error: unknown, chunk: Chunk): boolean {
    const api = error instanceof TrellisApiError ? error : null;
    if (api?.code === 'job_log_truncated') {
      // Every later chunk would be refused the same way: stop posting, keep running the job.
      this.options.logger.warn('the control plane cut the job log at its size limit; the rest is not shipped', {
        pending_bytes: this.queuedBytes,
      });
      this.logWasCut = true;
      this.discardQueue();
      return false;
    }
    if (api && (api.status === 400 || api.status === 413)) {
      // Dropping this one chunk keeps the rest of the log flowing.
      this.options.logger.error('the control plane refused a log chunk; dropped it', {
        error: api.message,
        bytes: chunk.bytes,
      });
      this.consume(chunk);
      return true;
    }
    this.options.logger.warn('the control plane takes no more logs for this job', { error: describeError(error) });
    this.drop();
    if (api) this.options.onJobGone?.(api);
    return false;
  }

  private drop(): void {
    this.gone = true;
    this.discardQueue();
  }

  private discardQueue(): void {
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.wakeWaiters();
  }

  private wakeWaiters(): void {
    if (this.waiters.length === 0 || this.queuedBytes > this.highWaterBytes / 2) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
