/**
 * A part starts this small, so a small body (a state file, most plans) never takes a part buffer;
 * past it, the body moves into a full-size buffer from the pool at once.
 */
const FIRST_CAPACITY = 64 * 1024;

/**
 * The part buffers of one store, shared by all its uploads: at most `count` buffers of `partSize`
 * bytes exist, so the uploads of a server together never hold more than `partSize × count` bytes
 * of bodies, however many run at once. An upload that finds none free waits (first come, first
 * served) while its client's request waits in turn; one that holds buffers only ever waits for its
 * own parts, so waiting never deadlocks.
 */
export class PartBufferPool {
  private readonly free: Buffer[] = [];
  private readonly waiting: ((buffer: Buffer) => void)[] = [];
  private allocated = 0;

  constructor(
    readonly partSize: number,
    readonly count: number,
  ) {}

  tryAcquire(): Buffer | undefined {
    const reused = this.free.pop();
    if (reused) return reused;
    if (this.allocated < this.count) {
      this.allocated += 1;
      return Buffer.allocUnsafe(this.partSize);
    }
    return undefined;
  }

  acquire(): Promise<Buffer> {
    const buffer = this.tryAcquire();
    if (buffer) return Promise.resolve(buffer);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(buffer: Buffer): void {
    const waiter = this.waiting.shift();
    if (waiter) waiter(buffer);
    else this.free.push(buffer);
  }
}

/**
 * The buffers of one upload: at most `queueSize` from the pool (one filling while the others are
 * sent), all given back by `close()`. A chunk of the body is copied into a part as it arrives and
 * nothing else of it is kept, so an upload holds at most `partSize × queueSize` bytes.
 */
export class UploadBuffers {
  private readonly own: Buffer[] = [];
  private readonly idle: Buffer[] = [];
  private readonly inFlight = new Set<Buffer>();
  private waiter: ((buffer: Buffer) => void) | undefined;
  private closed = false;

  constructor(
    private readonly pool: PartBufferPool,
    private readonly queueSize: number,
  ) {}

  /** The part a body starts in: small, outside the pool. */
  first(): Part {
    return new Part(Buffer.allocUnsafe(Math.min(FIRST_CAPACITY, this.pool.partSize)), this.pool.partSize);
  }

  /** Moves a first part that outgrew its small buffer into a full-size one. */
  async grow(part: Part): Promise<void> {
    const buffer = await this.take();
    part.buffer.copy(buffer, 0, 0, part.length);
    part.buffer = buffer;
  }

  /** An empty full-size part, once one of this upload's buffers (or a new one from the pool) is free. */
  async next(): Promise<Part> {
    return new Part(await this.take(), this.pool.partSize);
  }

  /** The part is being sent: returns what to call once S3 no longer reads its buffer. */
  sending(part: Part): () => void {
    const buffer = part.buffer;
    this.inFlight.add(buffer);
    return () => {
      this.inFlight.delete(buffer);
      if (this.closed) {
        this.giveBack(buffer);
        return;
      }
      const waiter = this.waiter;
      this.waiter = undefined;
      if (waiter) waiter(buffer);
      else this.idle.push(buffer);
    };
  }

  /** Gives every buffer back to the pool; one still being sent goes back when S3 is done with it. */
  close(): void {
    this.closed = true;
    this.idle.length = 0;
    for (const buffer of [...this.own]) if (!this.inFlight.has(buffer)) this.giveBack(buffer);
  }

  private async take(): Promise<Buffer> {
    const idle = this.idle.pop();
    if (idle) return idle;
    if (this.own.length < this.queueSize) {
      // Holding none, an upload may wait for the pool; holding some, it takes a free one or none.
      const buffer = this.own.length === 0 ? await this.pool.acquire() : this.pool.tryAcquire();
      if (buffer) {
        this.own.push(buffer);
        return buffer;
      }
    }
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  private giveBack(buffer: Buffer): void {
    const index = this.own.indexOf(buffer);
    if (index === -1) return;
    this.own.splice(index, 1);
    this.pool.release(buffer);
  }
}

/** One part being filled: `length` bytes of `buffer`. */
export class Part {
  length = 0;

  constructor(
    public buffer: Buffer,
    private readonly limit: number,
  ) {}

  get full(): boolean {
    return this.length === this.limit;
  }

  /** The bytes so far (a view, not a copy). */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  /**
   * Copies as much of `chunk` from `offset` as the buffer holds; returns how many bytes it took
   * (0 when a small first buffer must `grow` first).
   */
  fill(chunk: Uint8Array, offset: number): number {
    const wanted = Math.min(chunk.byteLength - offset, this.buffer.length - this.length);
    this.buffer.set(chunk.subarray(offset, offset + wanted), this.length);
    this.length += wanted;
    return wanted;
  }

  /** The buffer is full but the part is not: a first part that must grow. */
  get cramped(): boolean {
    return this.length === this.buffer.length && this.length < this.limit;
  }
}
