import {
  type EventBus,
  isTerminalJobStatus,
  type JobStatus,
  type LogChunk,
  RateLimitedError,
  type ScheduledTask,
  type UseCases,
  type UserActor,
} from '@trellis/core';
import type { Response } from 'express';
import { type JobUpdate, JobLogHub, RECHECK_SECONDS } from './JobLogHub.js';

/** How many live-log streams may be open, and how far a client may fall behind. */
export interface LiveLogLimits {
  /**
   * Bytes a stream may have waiting for its client. A client further behind is ended (cleanly,
   * between events); it resumes with `Last-Event-ID`, so it loses nothing.
   */
  maxBufferBytes: number;
  /** Streams one user may have open at once (over all their jobs). */
  perUser: number;
  /** Streams open on one job at once. */
  perJob: number;
}

export const DEFAULT_LIVE_LOG_LIMITS: LiveLogLimits = {
  maxBufferBytes: 1024 * 1024,
  perUser: 20,
  perJob: 200,
};

/** What the live-log streams of this process are doing (for operators and tests). */
export interface LiveLogStats {
  /** Streams open (a slot is held until the client's connection is done with it). */
  open: number;
  /** Open streams past their backlog, following the job live. */
  live: number;
  /** Open streams paused until their client reads what was sent (backlog pacing). */
  waiting: number;
  /** Bytes waiting for clients right now, over every open stream. */
  bufferedBytes: number;
  /** The most bytes ever seen waiting for one stream's client. */
  maxBufferedBytes: number;
  /** Streams ended because their client fell more than `maxBufferBytes` behind. */
  overflowed: number;
  /** Backlog pages read by streams (a page is read only once the one before it went out). */
  backlogPages: number;
  /** Stream requests answered `429 too_many_streams`. */
  refused: number;
  /** Followers ever registered with the job log hub (only after the job was authorized). */
  followed: number;
  /** Readers the hub runs: one per (owner, job) followed. */
  followedJobs: number;
}

/** Keeps proxies from closing an idle stream. */
const KEEPALIVE_SECONDS = 15;
/**
 * Chunks per backlog read: a few at first, then as many as make about `maxBufferBytes` at the
 * average size seen so far (at most 1000), so a page of large chunks is not all in memory at once.
 */
const FIRST_PAGE = 16;
const MAX_PAGE = 1000;
/** When the open streams free up is unknown; this is a polite pause. */
const RETRY_AFTER_S = 5;
/** A stream that was ended but whose client still reads nothing is cut after this long. */
const END_GRACE_MS = 30_000;

interface Slot {
  userId: string;
  jobId: string;
  res: Response;
  live: boolean;
  waiting: boolean;
  /** Writes a comment line on a live stream, so proxies keep it open; absent until it is live. */
  keepalive?: () => void;
}

/** Bytes of the text a chunk carries (an estimate for the updates a stream holds back). */
function updateBytes(update: JobUpdate): number {
  let bytes = 0;
  for (const chunk of update.chunks) bytes += chunk.log_chunk.length * 3;
  return bytes;
}

function frame(event: string, data: unknown, id?: number): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The hub hands the same chunk and update objects to every follower of a job, so each is
 * serialised and encoded once for all of them, not once per reader: with a thousand readers, the
 * fan-out of a chunk is then a thousand writes of one buffer. Weak, so a chunk's frame lives only
 * as long as the chunk.
 */
const chunkFrames = new WeakMap<LogChunk, Buffer>();
const updateFrames = new WeakMap<JobUpdate, Buffer>();

function logFrame(chunk: LogChunk): Buffer {
  let encoded = chunkFrames.get(chunk);
  if (!encoded) {
    encoded = Buffer.from(frame('log', chunk, chunk.id));
    chunkFrames.set(chunk, encoded);
  }
  return encoded;
}

/** Every chunk of an update as one buffer: what a follower that has sent everything before it writes. */
function logFramesOf(update: JobUpdate): Buffer {
  let encoded = updateFrames.get(update);
  if (!encoded) {
    encoded =
      update.chunks.length === 1 ? logFrame(update.chunks[0] as LogChunk) : Buffer.concat(update.chunks.map(logFrame));
    updateFrames.set(update, encoded);
  }
  return encoded;
}

/**
 * DESIGN §6: the live-log streams of this process (`GET /api/jobs/{id}/logs/stream`). A stream
 * is authorized (the job read as the caller) before it follows the job through the
 * `JobLogHub`, and it follows before it reads its backlog, sending a chunk only when its id is
 * past the last one sent — so no chunk is missed or sent twice, and a client reconnecting with
 * `Last-Event-ID` resumes exactly where it stopped.
 *
 * Memory per stream is bounded: the backlog is read a page at a time and written only as fast as
 * the client reads (the next write waits for `drain`); live chunks are written as they come, and
 * a client more than `maxBufferBytes` behind is ended so it resumes from the database instead of
 * the server holding its backlog. Open streams are capped per user and per job.
 */
export class LiveLogStreams {
  readonly limits: LiveLogLimits;
  private readonly hub: JobLogHub;
  private readonly slots = new Set<Slot>();
  private readonly perUser = new Map<string, number>();
  private readonly perJob = new Map<string, number>();
  private maxBufferedBytes = 0;
  private overflowed = 0;
  private refused = 0;
  private backlogPages = 0;
  private followed = 0;

  constructor(
    private readonly useCases: UseCases,
    events: EventBus,
    limits: Partial<LiveLogLimits> = {},
  ) {
    this.limits = { ...DEFAULT_LIVE_LOG_LIMITS, ...limits };
    this.hub = new JobLogHub(useCases, events);
  }

  /**
   * The streams' background work, one local task each for all of them (docs/architecture.md,
   * Background work): a keepalive comment on every live stream, so proxies keep idle ones open,
   * and a re-read of every followed job. Whoever serves the streams runs them (`trellis-server`
   * on its scheduler).
   */
  tasks(): ScheduledTask[] {
    return [
      {
        id: 'live-log-keepalive',
        every: KEEPALIVE_SECONDS,
        scope: 'local',
        run: async () => {
          this.keepAlive();
        },
      },
      { id: 'live-log-recheck', every: RECHECK_SECONDS, scope: 'local', run: async () => this.hub.recheck() },
    ];
  }

  /** Writes a keepalive comment on every live stream; returns how many. */
  keepAlive(): number {
    let written = 0;
    for (const slot of this.slots) {
      if (!slot.keepalive) continue;
      slot.keepalive();
      written += 1;
    }
    return written;
  }

  stats(): LiveLogStats {
    let live = 0;
    let waiting = 0;
    let bufferedBytes = 0;
    for (const slot of this.slots) {
      if (slot.live) live += 1;
      if (slot.waiting) waiting += 1;
      bufferedBytes += slot.res.writableLength;
    }
    return {
      open: this.slots.size,
      live,
      waiting,
      bufferedBytes,
      maxBufferedBytes: this.maxBufferedBytes,
      overflowed: this.overflowed,
      backlogPages: this.backlogPages,
      refused: this.refused,
      followed: this.followed,
      followedJobs: this.hub.followedJobs,
    };
  }

  /**
   * Serves the stream of the user's job on `res` from chunk `after` on, until the job ends, the
   * client goes (`closed`) or falls too far behind. Throws (before anything is written) when the
   * job is not the user's, or a cap on open streams is reached.
   */
  async serve(user: UserActor, jobId: string, after: number, res: Response, closed: AbortSignal): Promise<void> {
    // Authorize first: a request for someone else's job never reaches the hub.
    await this.useCases.jobs.get(user, jobId);
    const slot = this.admit(user.userId, jobId, res);
    const max = this.limits.maxBufferBytes;

    let lastSent = after;
    let sentStatus: JobStatus | null = null;
    let endQueued = false;
    let ended = false;
    let finish: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    // Updates that arrive while the backlog goes out. Past `max` bytes their chunks are dropped
    // and read again from the database, so a slow backlog cannot pile up live chunks either.
    let pending: JobUpdate[] | null = [];
    let pendingBytes = 0;
    let pendingDropped = false;

    const record = () => {
      this.maxBufferedBytes = Math.max(this.maxBufferedBytes, res.writableLength);
    };
    /** `whole`: the update's chunks may go out as one write (live); else one frame per chunk (paced). */
    const framesOf = (update: JobUpdate, whole: boolean): (string | Buffer)[] => {
      const frames: (string | Buffer)[] = [];
      if (endQueued) return frames;
      const first = update.chunks[0];
      const encoded = whole && first && first.id > lastSent ? logFramesOf(update) : null;
      // An update of several chunks past the cap goes chunk by chunk, so the cap on the pile holds
      // between them (appends quicker than the hub's read give it several big chunks at once).
      if (encoded && (update.chunks.length === 1 || encoded.length <= max)) {
        // In step with the hub (the usual case live): the update's frames, encoded once for all.
        frames.push(encoded);
        lastSent = (update.chunks.at(-1) as LogChunk).id;
      } else {
        for (const chunk of update.chunks) {
          if (chunk.id <= lastSent) continue;
          frames.push(logFrame(chunk));
          lastSent = chunk.id;
        }
      }
      if (update.job && update.job.status !== sentStatus) {
        sentStatus = update.job.status;
        frames.push(frame('status', { status: update.job.status, error_message: update.job.error_message }));
      }
      if (update.job && isTerminalJobStatus(update.job.status)) {
        frames.push(frame('end', { status: update.job.status }, lastSent));
        endQueued = true;
      }
      return frames;
    };
    const end = () => {
      ended = true;
      finish();
    };

    /** Live: write at once, unless the client is more than `max` behind; then end the stream. */
    const writeLive = (text: string | Buffer): boolean => {
      if (ended) return false;
      const waiting = res.writableLength;
      // An event alone always goes out (a chunk may be close to 1 MiB); the cap is on the pile.
      if (waiting > 0 && waiting + (typeof text === 'string' ? Buffer.byteLength(text) : text.length) > max) {
        this.overflowed += 1;
        end();
        return false;
      }
      res.write(text);
      record();
      return true;
    };
    const deliverLive = (update: JobUpdate) => {
      for (const text of framesOf(update, true)) if (!writeLive(text)) return;
      if (endQueued) end();
    };

    /** Backlog: write, then wait until the client took it before writing more. */
    const drained = () =>
      new Promise<void>((resolve) => {
        const resume = () => {
          res.off('drain', resume);
          closed.removeEventListener('abort', resume);
          slot.waiting = false;
          resolve();
        };
        slot.waiting = true;
        res.on('drain', resume);
        closed.addEventListener('abort', resume, { once: true });
        if (closed.aborted) resume();
      });
    const deliverPaced = async (update: JobUpdate) => {
      for (const text of framesOf(update, false)) {
        if (closed.aborted) return;
        const flowing = res.write(text);
        record();
        if (!flowing) await drained();
      }
      if (endQueued) end();
    };

    const unfollow = this.hub.follow(user.userId, jobId, (update) => {
      if (ended) return;
      if (!pending) {
        deliverLive(update);
        return;
      }
      const bytes = updateBytes(update);
      if (pendingDropped || pendingBytes + bytes > max) {
        pendingDropped = true;
        pending = pending.flatMap((held) => (held.job ? [{ chunks: [], job: held.job }] : []));
        pendingBytes = 0;
        if (update.job) pending.push({ chunks: [], job: update.job });
        return;
      }
      pending.push(update);
      pendingBytes += bytes;
    });
    this.followed += 1;
    try {
      // Read after following, so a status change from now on reaches the stream either way.
      const job = await this.useCases.jobs.get(user, jobId);
      res.status(200);
      res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
      res.setHeader('Cache-Control', 'no-cache, no-transform');
      res.setHeader('X-Accel-Buffering', 'no');
      res.flushHeaders();
      let backlogRead = false;
      let limit = FIRST_PAGE;
      let readChunks = 0;
      let readBytes = 0;
      while (!closed.aborted && !ended) {
        if (!backlogRead || pendingDropped) {
          pendingDropped = false;
          let page: Awaited<ReturnType<typeof this.useCases.logs.read>>;
          do {
            page = await this.useCases.logs.readForPerson(user, jobId, { after: lastSent, limit });
            this.backlogPages += 1;
            for (const chunk of page.logs) readBytes += chunk.log_chunk.length;
            readChunks += page.logs.length;
            if (readChunks > 0) limit = Math.min(MAX_PAGE, Math.max(1, Math.floor((max * readChunks) / readBytes)));
            await deliverPaced({ chunks: page.logs, job: null });
          } while (page.has_more && !closed.aborted);
          if (!backlogRead) {
            backlogRead = true;
            this.hub.backlogRead(user.userId, jobId, lastSent);
            // The job was read before the backlog: if it had ended, every chunk is out by now.
            await deliverPaced({ chunks: [], job });
          }
          continue;
        }
        const queued = pending ?? [];
        if (queued.length === 0) break;
        pending = [];
        pendingBytes = 0;
        for (const update of queued) await deliverPaced(update);
      }
      pending = null;
      slot.live = true;
      slot.keepalive = () => void writeLive(': keepalive\n\n');
      closed.addEventListener('abort', finish, { once: true });
      if (closed.aborted) finish();
      await done;
      slot.keepalive = undefined;
    } finally {
      unfollow();
      // Before the headers went out (the job is gone), the error becomes a problem.
      if (res.headersSent) this.endResponse(res);
    }
  }

  /** Ends the response between events; a client that reads none of it any more is cut later. */
  private endResponse(res: Response): void {
    res.end();
    if (res.writableFinished || res.destroyed) return;
    const cut = setTimeout(() => res.destroy(), END_GRACE_MS);
    cut.unref();
    res.once('close', () => clearTimeout(cut));
  }

  /** Takes a slot for a stream, held until the response is closed; throws at a cap. */
  private admit(userId: string, jobId: string, res: Response): Slot {
    const ofUser = this.perUser.get(userId) ?? 0;
    const ofJob = this.perJob.get(jobId) ?? 0;
    if (ofUser >= this.limits.perUser || ofJob >= this.limits.perJob) {
      this.refused += 1;
      const message =
        ofUser >= this.limits.perUser
          ? `you have ${ofUser} live log streams open, the most allowed; close one or retry later`
          : `this job has ${ofJob} live log streams open, the most allowed; retry later`;
      throw new RateLimitedError(message, RETRY_AFTER_S, 'too_many_streams');
    }
    const slot: Slot = { userId, jobId, res, live: false, waiting: false };
    this.slots.add(slot);
    this.perUser.set(userId, ofUser + 1);
    this.perJob.set(jobId, ofJob + 1);
    const release = () => {
      this.slots.delete(slot);
      this.decrement(this.perUser, userId);
      this.decrement(this.perJob, jobId);
    };
    // The client may have gone while the job was read: then no 'close' is coming any more.
    if (res.closed) queueMicrotask(release);
    else res.once('close', release);
    return slot;
  }

  private decrement(counts: Map<string, number>, key: string): void {
    const count = (counts.get(key) ?? 1) - 1;
    if (count > 0) counts.set(key, count);
    else counts.delete(key);
  }
}
