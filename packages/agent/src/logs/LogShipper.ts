import type { JobStatus, StreamType } from '@trellis/core';
import { Backoff, isTransient, type RetryClock, retry, systemClock, TrellisApiError } from '@trellis/client';
import { type AgentLogger, describeError } from '../logging/AgentLogger.js';
import { LogSpool, type SealedChunk } from './LogSpool.js';

/** The part of the client the shipper uses. */
export interface LogApi {
  appendLogBatch(
    jobId: string,
    chunks: ReadonlyArray<{ seq: number; log_chunk: string; stream_type: StreamType }>,
  ): Promise<{ last_seq: number; stored: number; job_status: JobStatus }>;
}

export interface LogShipperOptions {
  api: LogApi;
  jobId: string;
  logger: AgentLogger;
  /** Called with the job status of every acknowledged batch (`CANCELLED` means stop). */
  onJobStatus?: (status: JobStatus) => void;
  /** Called once when the server says the job takes no more logs from this agent. */
  onJobGone?: (error: TrellisApiError) => void;
  /** Under the server's 1 MiB limit, with room to spare. */
  maxChunkBytes?: number;
  /** A batch: at most this many bytes (under the server's 4 MiB) ... */
  maxBatchBytes?: number;
  /** ... and at most this many chunks (the server takes 1,000). */
  maxBatchChunks?: number;
  /** Batches posted at once; the server keeps their order by `seq`. */
  maxInFlight?: number;
  /**
   * Sealed chunks kept in memory; past it they wait in the spool file, or, without one, the
   * producer is asked to wait (`full`).
   */
  highWaterBytes?: number;
  /** The spool file (in the agent's work directory); none: backpressure instead. */
  spoolPath?: string;
  backoff?: Backoff;
  /** Time for the retries; the real clock by default. */
  clock?: RetryClock;
}

/** A run of one stream: the pieces as appended, so no huge string is ever built or re-sliced. */
interface Segment {
  stream: StreamType;
  parts: Array<{ text: string; bytes: number }>;
}

/** What the next chunk takes: whole pieces of the head segment, or a cut of its first piece. */
interface Chunk {
  stream: StreamType;
  text: string;
  bytes: number;
  wholeParts: number;
}

/** A batch being posted: chunks of consecutive `seq`; `settled` resolves once it is done with. */
interface Batch {
  chunks: SealedChunk[];
  bytes: number;
  settled: Promise<void>;
  /** Refused once and replaced by a note: a second refusal ends the shipping. */
  replaced?: boolean;
}

export interface ShipperStats {
  requests: number;
  chunks: number;
  bytes: number;
  retries: number;
  /** Batches the server already held (a retry after a lost answer): stored once. */
  duplicatesAvoided: number;
  /** Bytes that waited in the spool file. */
  spooledBytes: number;
  /** The most log bytes held in memory at once (open text, sealed chunks, batches in flight). */
  peakMemoryBytes: number;
}

/**
 * Ships a job's log to the control plane in order. Text is queued per stream and sealed into
 * chunks of at most `maxChunkBytes` (at a line end when one is near), each with the next sequence
 * number of the job; chunks are posted in batches (size-bounded, or whatever is sealed when
 * `flush()` is called, about once a second), a few batches in flight at once. A batch that fails is
 * posted again with the same sequence numbers, so the server stores it once; one that overtook an
 * earlier batch (`log_seq_gap`) waits for that one and goes again. When the server is slower than
 * the engine, sealed chunks past `highWaterBytes` wait in a spool file: memory stays bounded and
 * nothing is dropped.
 */
export class LogShipper {
  private readonly queue: Segment[] = [];
  private queuedBytes = 0;
  private readonly sealed: SealedChunk[] = [];
  private sealedBytes = 0;
  private readonly spool: LogSpool | null;
  /**
   * The spool file could not be written (the work dir full, issue 30): from then on the producer
   * is held back as without one, and chunks sealed while earlier ones still wait in the file wait
   * here, in memory, after them: none is dropped and the order holds.
   */
  private spoolRefused = false;
  private readonly overflow: SealedChunk[] = [];
  private overflowBytes = 0;
  private readonly inFlight: Batch[] = [];
  private inFlightBytes = 0;
  private nextSeq = 1;
  private gone = false;
  /** The server cut the job's log at its cap: the job runs on, its log takes no more. */
  private logWasCut = false;
  /** Out of time (close) or abandoned: nothing more is posted. */
  private stalled = false;
  private deadline = Number.POSITIVE_INFINITY;
  private readonly abandon = new AbortController();
  private waiters: Array<() => void> = [];
  private readonly maxChunkBytes: number;
  private readonly maxBatchBytes: number;
  private readonly maxBatchChunks: number;
  private readonly maxInFlight: number;
  private readonly highWaterBytes: number;
  private readonly backoff: Backoff;
  readonly stats: ShipperStats = {
    requests: 0,
    chunks: 0,
    bytes: 0,
    retries: 0,
    duplicatesAvoided: 0,
    spooledBytes: 0,
    peakMemoryBytes: 0,
  };

  constructor(private readonly options: LogShipperOptions) {
    this.maxChunkBytes = options.maxChunkBytes ?? 256 * 1024;
    this.maxBatchBytes = Math.max(options.maxBatchBytes ?? 2 * 1024 * 1024, this.maxChunkBytes);
    this.maxBatchChunks = options.maxBatchChunks ?? 500;
    this.maxInFlight = options.maxInFlight ?? 3;
    this.highWaterBytes = options.highWaterBytes ?? 8 * 1024 * 1024;
    this.spool = options.spoolPath ? new LogSpool(options.spoolPath) : null;
    this.backoff = options.backoff ?? new Backoff({ initialMs: 500, maxMs: 10_000 });
  }

  /** Queues text; full chunks are sealed at once and full batches posted, the rest waits for `flush()`. */
  append(stream: StreamType, text: string): void {
    if (text === '' || this.stopped) return;
    const part = { text, bytes: Buffer.byteLength(text) };
    const last = this.queue.at(-1);
    if (last && last.stream === stream) last.parts.push(part);
    else this.queue.push({ stream, parts: [part] });
    this.queuedBytes += part.bytes;
    this.seal(false);
    this.pump(false);
    this.notePeak();
  }

  /** True while the producer should stop reading its source (only without a spool file). */
  get full(): boolean {
    return (
      !this.stopped &&
      (this.spool === null || this.spoolRefused) &&
      this.queuedBytes + this.sealedBytes + this.overflowBytes > this.highWaterBytes
    );
  }

  /** Resolves once the queue is back under half the high-water mark. */
  waitForRoom(): Promise<void> {
    if (!this.full) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Log bytes not yet acknowledged by the server. */
  get pendingBytes(): number {
    return this.queuedBytes + this.sealedBytes + (this.spool?.bytes ?? 0) + this.overflowBytes + this.inFlightBytes;
  }

  /** True once the server refused further logs for the job. */
  get jobGone(): boolean {
    return this.gone;
  }

  /** True once the server cut the job's log at its size limit (the job itself goes on). */
  get logCut(): boolean {
    return this.logWasCut;
  }

  /** Ships everything queued (and whatever is appended meanwhile), batch after batch. */
  async flush(): Promise<void> {
    this.seal(true);
    this.pump(true);
    while (this.inFlight.length > 0) {
      await Promise.race(this.inFlight.map((batch) => batch.settled));
      this.seal(true);
      this.pump(true);
    }
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
    } finally {
      closed.abort();
    }
    if (this.pendingBytes > 0) {
      this.options.logger.error('gave up shipping the rest of the job log', { pending_bytes: this.pendingBytes });
      this.stalled = true;
      this.discardQueue();
    }
    this.spool?.close();
  }

  private get stopped(): boolean {
    return this.gone || this.logWasCut || this.stalled;
  }

  /** Seals the queued text into chunks: complete runs of a stream and full chunks, or all of it. */
  private seal(all: boolean): void {
    while (this.queue.length > 0) {
      const head = this.queue[0] as Segment;
      const headBytes = head.parts.reduce((sum, part) => sum + part.bytes, 0);
      if (!all && this.queue.length === 1 && headBytes < this.maxChunkBytes) return;
      const chunk = this.peekChunk();
      this.consume(chunk);
      const sealed: SealedChunk = { seq: this.nextSeq++, stream: chunk.stream, text: chunk.text, bytes: chunk.bytes };
      const spooling =
        this.spool !== null &&
        !this.spoolRefused &&
        (this.spool.length > 0 || this.sealedBytes + sealed.bytes > this.highWaterBytes);
      if (spooling && this.spoolChunk(sealed)) continue;
      if (this.overflow.length > 0 || (this.spool?.length ?? 0) > 0) {
        this.overflow.push(sealed);
        this.overflowBytes += sealed.bytes;
      } else {
        this.sealed.push(sealed);
        this.sealedBytes += sealed.bytes;
      }
    }
  }

  /** Posts batches while there is room in flight: full ones, or any when `force`. */
  private pump(force: boolean): void {
    while (!this.stopped && this.inFlight.length < this.maxInFlight) {
      this.refill();
      if (this.sealed.length === 0) return;
      if (!force && this.sealedBytes < this.maxBatchBytes && this.sealed.length < this.maxBatchChunks) return;
      const chunks: SealedChunk[] = [];
      let bytes = 0;
      while (this.sealed.length > 0 && chunks.length < this.maxBatchChunks) {
        const next = this.sealed[0] as SealedChunk;
        if (chunks.length > 0 && bytes + next.bytes > this.maxBatchBytes) break;
        chunks.push(next);
        bytes += next.bytes;
        this.sealed.shift();
      }
      this.sealedBytes -= bytes;
      this.inFlightBytes += bytes;
      const previous = this.inFlight.at(-1)?.settled ?? null;
      const batch: Batch = { chunks, bytes, settled: Promise.resolve() };
      batch.settled = this.post(batch, previous).finally(() => {
        this.inFlight.splice(this.inFlight.indexOf(batch), 1);
        this.inFlightBytes -= batch.bytes;
      });
      this.inFlight.push(batch);
      this.notePeak();
      this.wakeWaiters();
    }
  }

  /** Writes a chunk to the spool file; false (and no spooling from then on) when the file cannot take it. */
  private spoolChunk(chunk: SealedChunk): boolean {
    try {
      (this.spool as LogSpool).push(chunk);
      this.stats.spooledBytes += chunk.bytes;
      return true;
    } catch (error) {
      this.spoolRefused = true;
      this.options.logger.warn(
        'the log spool file cannot be written; the log waits in memory and holds the engine back',
        {
          error: describeError(error),
        },
      );
      return false;
    }
  }

  /** Brings chunks back from the spool file while memory has room, then those that waited behind them in memory. */
  private refill(): void {
    if (!this.spool) return;
    while (this.spool.length > 0 && this.sealedBytes < this.highWaterBytes / 2) {
      const chunk = this.spool.shift() as SealedChunk;
      this.sealed.push(chunk);
      this.sealedBytes += chunk.bytes;
    }
    if (this.spool.length > 0 || this.overflow.length === 0) return;
    this.sealed.push(...this.overflow.splice(0));
    this.sealedBytes += this.overflowBytes;
    this.overflowBytes = 0;
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
  }

  /**
   * Posts one batch until it is stored (the same `seq`s each time, so a post that landed before
   * its answer was lost is not stored twice). A batch that overtook the one before it waits for
   * that one (`previous`) and goes again; one that finds earlier batches gone from a log that had
   * stored them says so in their place (`sayLost`) and goes again.
   */
  private async post(batch: Batch, previous: Promise<void> | null): Promise<void> {
    const clock = this.options.clock ?? systemClock;
    const body = batch.chunks.map((chunk) => ({ seq: chunk.seq, log_chunk: chunk.text, stream_type: chunk.stream }));
    const firstSeq = body[0]?.seq ?? 0;
    const send = async () => {
      this.stats.requests += 1;
      const answer = await this.options.api.appendLogBatch(this.options.jobId, body);
      if (answer.stored < body.length) this.stats.duplicatesAvoided += 1;
      this.backoff.reset();
      this.options.onJobStatus?.(answer.job_status);
    };
    try {
      await retry(
        async () => {
          for (let attempt = 0; !this.stopped; attempt++) {
            try {
              return await send();
            } catch (error) {
              if (!(error instanceof TrellisApiError && error.code === 'log_seq_gap') || attempt >= 2) throw error;
              if (previous !== null) {
                // It overtook the batch before it: that one goes first.
                await previous;
                previous = null;
              } else {
                await this.sayLost(error, firstSeq);
              }
            }
          }
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
      if (this.stopped) return;
      this.stats.chunks += batch.chunks.length;
      this.stats.bytes += batch.bytes;
    } catch (error) {
      if (!isTransient(error)) await this.refused(error, batch);
      else this.stalled = true; // out of time, or abandoned
    }
  }

  /**
   * The control plane holds the log only up to before `expected_seq` although it had stored the
   * batches up to `firstSeq - 1` (its database lost its last commits, e.g. a failover to a replica
   * that lagged): those seqs get one `SYSTEM` line saying so, so the log goes on instead of the job
   * being given up.
   */
  private async sayLost(gap: TrellisApiError, firstSeq: number): Promise<void> {
    const expected = gap.extensions.expected_seq;
    if (typeof expected !== 'number' || !Number.isInteger(expected) || expected < 1 || expected >= firstSeq) throw gap;
    const lost = firstSeq - expected;
    this.options.logger.warn('the control plane lost log chunks it had stored; saying so in their place', {
      from_seq: expected,
      to_seq: firstSeq - 1,
    });
    const note = `[trellis-agent] ${lost} log chunk${lost === 1 ? '' : 's'} the control plane had stored went missing there (seq ${expected}–${firstSeq - 1})\n`;
    for (let seq = expected; seq < firstSeq; seq += this.maxBatchChunks) {
      const end = Math.min(firstSeq, seq + this.maxBatchChunks);
      const filler = Array.from({ length: end - seq }, (_, index) => ({
        seq: seq + index,
        log_chunk: seq + index === expected ? note : '',
        stream_type: 'SYSTEM' as const,
      }));
      this.stats.requests += 1;
      await this.options.api.appendLogBatch(this.options.jobId, filler);
    }
  }

  /** A refusal that retrying cannot fix. */
  private async refused(error: unknown, batch: Batch): Promise<void> {
    const api = error instanceof TrellisApiError ? error : null;
    if (api?.code === 'job_log_truncated') {
      // Every later chunk would be refused the same way: stop posting, keep running the job.
      this.options.logger.warn('the control plane cut the job log at its size limit; the rest is not shipped', {
        pending_bytes: this.pendingBytes,
      });
      this.logWasCut = true;
      this.discardQueue();
      return;
    }
    if (api && (api.status === 400 || api.status === 413) && !batch.replaced) {
      // Dropped, but its seqs still go (as one SYSTEM line) so the batches after it are not a gap.
      this.options.logger.error('the control plane refused a log batch; dropped it', {
        error: api.message,
        bytes: batch.bytes,
      });
      const note = `[trellis-agent] ${batch.bytes} bytes of this log were refused by the control plane: ${api.message}\n`;
      batch.chunks = batch.chunks.map((chunk, index) => ({
        seq: chunk.seq,
        stream: 'SYSTEM',
        text: index === 0 ? note : '',
        bytes: index === 0 ? Buffer.byteLength(note) : 0,
      }));
      this.inFlightBytes -= batch.bytes;
      batch.bytes = batch.chunks.reduce((sum, chunk) => sum + chunk.bytes, 0);
      this.inFlightBytes += batch.bytes;
      batch.replaced = true;
      await this.post(batch, null);
      return;
    }
    this.options.logger.warn('the control plane takes no more logs for this job', { error: describeError(error) });
    this.gone = true;
    this.discardQueue();
    if (api) this.options.onJobGone?.(api);
  }

  private discardQueue(): void {
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.sealed.length = 0;
    this.sealedBytes = 0;
    this.overflow.length = 0;
    this.overflowBytes = 0;
    this.spool?.close();
    this.wakeWaiters();
  }

  private notePeak(): void {
    const memory = this.queuedBytes + this.sealedBytes + this.overflowBytes + this.inFlightBytes;
    if (memory > this.stats.peakMemoryBytes) this.stats.peakMemoryBytes = memory;
  }

  private wakeWaiters(): void {
    if (
      this.waiters.length === 0 ||
      this.queuedBytes + this.sealedBytes + this.overflowBytes > this.highWaterBytes / 2
    ) {
      return;
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
