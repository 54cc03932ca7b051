import {
  type Clock,
  DomainError,
  type EventBus,
  type JobListQuery,
  type JobView,
  jobListMatcher,
  RateLimitedError,
  type ScheduledTask,
  type UseCases,
  type UserActor,
} from '@trellis/core';
import type { Response } from 'express';
import type { Html } from '../html.js';
import { type JobListView, jobList, jobRow, newJobRow, removedJobRow } from './jobLists.js';

/** How many row streams may be open. */
export interface LiveListsLimits {
  /** Streams one person may have open at once (one per open tab of a list). */
  perUser: number;
  /** Streams open in this process at once. */
  total: number;
}

export const DEFAULT_LIVE_LISTS_LIMITS: LiveListsLimits = { perUser: 20, total: 2000 };

/** What the row streams of this process are doing (for operators and tests). */
export interface LiveListsStats {
  open: number;
  /** Jobs read because of an event: one read per (viewer, changed job), whatever their tabs. */
  reads: number;
  /** Rows sent over every stream. */
  rowsSent: number;
  refused: number;
  /** Streams ended because their client fell more than the buffer behind. */
  overflowed: number;
}

/** What a stream is asked for: the list's view and its filters, as the page's query gave them. */
export interface JobRowsRequest {
  view: JobListView;
  query: JobListQuery;
  /** How many jobs the list shows, as given (the stream sends as many again on connect). */
  limit: unknown;
  base: string;
}

/** Keeps proxies from closing an idle stream. */
const KEEPALIVE_SECONDS = 15;
/** When the open streams free up is unknown; this is a polite pause. */
const RETRY_AFTER_S = 5;
/** How long a browser waits before it reconnects a stream that ended. */
const RECONNECT_MS = 3000;
/**
 * Bytes a stream may hold for a client that reads nothing. A client further behind is ended: it
 * reconnects and is sent the whole list again, so it misses nothing and the server holds no pile.
 */
const MAX_BUFFER_BYTES = 256 * 1024;

interface RowStream {
  user: UserActor;
  /** The owners whose jobs the viewer could read when the stream opened (them, their organizations). */
  owners: ReadonlySet<string>;
  view: JobListView;
  base: string;
  matches: (job: JobView) => boolean;
  /** Ids of the jobs whose rows the page has now. */
  shown: Set<string>;
  /** Rows that changed while the list was read on connect: sent right after it. */
  held: JobView[] | null;
  res: Response;
  /** Ends the stream (its client reconnects and is sent the whole list again). */
  end: () => void;
}

/**
 * A stream of a list sent whole on every change: the queue, where a job's start moves every
 * position, and the fleet, whose counts move with a vine's status. Streams with the same key (one person, the same list) are sent one read.
 */
interface WholeStream {
  user: UserActor;
  owners: ReadonlySet<string>;
  /** The person's id and the list's. */
  key: string;
  read: () => Promise<Html>;
  /** While the list is read on connect: whether a job changed meanwhile (it is read again). */
  opening: { missed: boolean } | null;
  res: Response;
  end: () => void;
}

/** A list sent whole (`serveWhole`): what its stream is, and how to read it as the person. */
export interface WholeListRequest {
  /** Which list of the person's it is (its filters): their streams of the same key share a read. */
  key: string;
  read: () => Promise<Html>;
}

/** Headers and the reconnection delay of a stream that opens. */
function startStream(res: Response): void {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('X-Accel-Buffering', 'no');
  res.write(`retry: ${RECONNECT_MS}\n\n`);
}

/** A promise settled when `closed` aborts or `end()` is called, whichever comes first. */
function endedBy(closed: AbortSignal): { ended: Promise<void>; end: () => void } {
  let end: () => void = () => {};
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  if (closed.aborted) end();
  closed.addEventListener('abort', () => end(), { once: true });
  return { ended, end };
}

/** One Server-Sent Event of HTML: each line of it a `data:` line. */
function htmlEvent(event: string, markup: Html): string {
  return `event: ${event}\n${markup.value
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}`)
    .join('\n')}\n\n`;
}

/**
 * The web's live job lists (issue 29): `GET /live/jobs` streams a list's rows as HTML fragments,
 * rendered by the template the page uses (`jobLists.ts`), when a job is queued, starts or ends.
 *
 * It learns of those from the event bus the live-log streams use (Postgres `LISTEN/NOTIFY` across
 * replicas), whose events carry ids only. For each event, each person with a stream open whose
 * organizations own the job has the job read ONCE, as them — the same authorized read as the API's
 * `GET /api/jobs/{id}` — whatever number of tabs they have open; nobody else's stream costs a read,
 * and a job they may not read is never sent. Reads of one job for one person never overlap: events
 * that come during a read cause one more read after it, so the last row sent is never older than
 * the last event.
 *
 * Lists where one job's change moves other rows — the queue's positions, the fleet's counts — are
 * sent whole instead (`serveWhole`, `GET /live/queue`, `GET /live/fleet`): read once per event for
 * each person and list (their tabs of the same list share it), as them, by the page's own template.
 */
export class LiveLists {
  readonly limits: LiveListsLimits;
  private readonly streams = new Set<RowStream>();
  private readonly wholeStreams = new Set<WholeStream>();
  private readonly perUser = new Map<string, number>();
  /** A read's key → whether another event came during the read in flight. */
  private readonly reading = new Map<string, { again: boolean }>();
  private reads = 0;
  private rowsSent = 0;
  private refused = 0;
  private overflowed = 0;

  constructor(
    private readonly useCases: UseCases,
    events: EventBus,
    private readonly clock: Clock,
    limits: Partial<LiveListsLimits> = {},
  ) {
    this.limits = { ...DEFAULT_LIVE_LISTS_LIMITS, ...limits };
    events.subscribe((event) => {
      if (event.type !== 'job_queued' && event.type !== 'job_status_changed') return;
      const viewers = new Map<string, UserActor>();
      for (const stream of this.streams) {
        if (stream.owners.has(event.owner_id)) viewers.set(stream.user.userId, stream.user);
      }
      for (const user of viewers.values()) this.read(user, event.job_id);
      const lists = new Map<string, WholeStream>();
      for (const stream of this.wholeStreams) {
        if (!stream.owners.has(event.owner_id)) continue;
        if (stream.opening) stream.opening.missed = true;
        else lists.set(stream.key, stream);
      }
      for (const stream of lists.values()) this.readWhole(stream.key, stream.read);
    });
  }

  /** The streams' background work: a keepalive comment on every stream, so proxies keep idle ones open. */
  tasks(): ScheduledTask[] {
    return [
      {
        id: 'live-lists-keepalive',
        every: KEEPALIVE_SECONDS,
        scope: 'local',
        run: async () => {
          this.keepAlive();
        },
      },
    ];
  }

  /** Writes a keepalive comment on every stream; returns how many. */
  keepAlive(): number {
    for (const stream of this.streams) this.write(stream, ': keepalive\n\n');
    for (const stream of this.wholeStreams) this.write(stream, ': keepalive\n\n');
    return this.streams.size + this.wholeStreams.size;
  }

  stats(): LiveListsStats {
    return {
      open: this.streams.size + this.wholeStreams.size,
      reads: this.reads,
      rowsSent: this.rowsSent,
      refused: this.refused,
      overflowed: this.overflowed,
    };
  }

  /**
   * Serves a list's stream on `res` until the client goes or `closed` aborts. Throws before anything
   * is written when the list's filters are refused or a cap on open streams is reached.
   */
  async serve(
    user: UserActor,
    orgIds: readonly string[],
    request: JobRowsRequest,
    res: Response,
    closed: AbortSignal,
  ): Promise<void> {
    const matches = jobListMatcher(request.query, user.userId);
    this.admit(user.userId);
    const { ended, end } = endedBy(closed);
    const stream: RowStream = {
      user,
      owners: new Set([user.userId, ...orgIds]),
      view: request.view,
      base: request.base,
      matches,
      shown: new Set(),
      held: [],
      res,
      end: () => end(),
    };
    // Follow before the list is read: a change from now on reaches the stream either way.
    this.streams.add(stream);
    try {
      const list = await this.useCases.jobs.list(user, { ...request.query, limit: request.limit });
      if (closed.aborted) return;
      startStream(res);
      // The whole list again: what changed between the page and this (re)connect is in it.
      res.write(htmlEvent('rows', jobList(stream.base, stream.view, list.items, this.clock.now())));
      for (const job of list.items) stream.shown.add(job.id);
      const held = stream.held ?? [];
      stream.held = null;
      for (const job of held) this.deliver(stream, job);
      await ended;
    } finally {
      this.streams.delete(stream);
      this.release(user.userId);
      if (res.headersSent) res.end();
    }
  }

  /**
   * Serves a list sent whole on every change of a job its viewer may see (`GET /live/queue`), read
   * as them, once for all their streams of the same list, until the client goes or `closed` aborts.
   */
  async serveWhole(
    user: UserActor,
    orgIds: readonly string[],
    request: WholeListRequest,
    res: Response,
    closed: AbortSignal,
  ): Promise<void> {
    this.admit(user.userId);
    const { ended, end } = endedBy(closed);
    const stream: WholeStream = {
      user,
      owners: new Set([user.userId, ...orgIds]),
      key: `${user.userId} ${request.key}`,
      read: request.read,
      opening: { missed: false },
      res,
      end: () => end(),
    };
    this.wholeStreams.add(stream);
    try {
      const list = await request.read();
      if (closed.aborted) return;
      startStream(res);
      res.write(htmlEvent('rows', list));
      const missed = stream.opening?.missed === true;
      stream.opening = null;
      if (missed) this.readWhole(stream.key, stream.read);
      await ended;
    } finally {
      this.wholeStreams.delete(stream);
      this.release(user.userId);
      if (res.headersSent) res.end();
    }
  }

  /** Reads a whole list once for every stream of it, and again if a job changed meanwhile. */
  private readWhole(key: string, read: () => Promise<Html>): void {
    this.coalesced(`whole ${key}`, async () => {
      let list: Html;
      try {
        list = await read();
      } catch {
        // The list as it was stays; the next event, or a reconnect, brings it up to date.
        return;
      }
      const event = htmlEvent('rows', list);
      for (const stream of this.wholeStreams) {
        if (stream.key !== key || stream.opening) continue;
        this.rowsSent += 1;
        this.write(stream, event);
      }
    });
  }

  /** Runs `work` now, or once more after the run in flight of the same key (many events, few reads). */
  private coalesced(key: string, work: () => Promise<void>): void {
    const inFlight = this.reading.get(key);
    if (inFlight) {
      inFlight.again = true;
      return;
    }
    const state = { again: true };
    this.reading.set(key, state);
    void (async () => {
      try {
        while (state.again) {
          state.again = false;
          this.reads += 1;
          await work();
        }
      } finally {
        this.reading.delete(key);
      }
    })();
  }

  /** Reads the job as the person, once for all their streams, and again if it changed meanwhile. */
  private read(user: UserActor, jobId: string): void {
    this.coalesced(`job ${user.userId} ${jobId}`, async () => {
      let job: JobView | null;
      try {
        job = await this.useCases.jobs.get(user, jobId);
      } catch (error) {
        // Gone, or no longer theirs to read: its row goes. Anything else (the database away)
        // leaves the rows as they are; the next event, or a reconnect, brings them up to date.
        if (!(error instanceof DomainError && (error.kind === 'not_found' || error.kind === 'forbidden'))) return;
        job = null;
      }
      for (const stream of this.streams) {
        if (stream.user.userId !== user.userId) continue;
        if (job) this.deliver(stream, job);
        else if (stream.shown.has(jobId)) this.remove(stream, jobId);
      }
    });
  }

  /** Sends the job's row: new at the top, a shown one in place, one that left the list's filters gone. */
  private deliver(stream: RowStream, job: JobView): void {
    if (stream.held) {
      stream.held.push(job);
      return;
    }
    const shown = stream.shown.has(job.id);
    if (!stream.matches(job)) {
      if (shown) this.remove(stream, job.id);
      return;
    }
    const now = this.clock.now();
    this.rowsSent += 1;
    // A page listing no job shows a note, not a table: the list comes whole, with this one row.
    const event =
      stream.shown.size === 0
        ? htmlEvent('rows', jobList(stream.base, stream.view, [job], now))
        : htmlEvent(
            'row',
            shown
              ? jobRow(stream.base, stream.view, job, now, 'replace')
              : newJobRow(stream.base, stream.view, job, now),
          );
    stream.shown.add(job.id);
    this.write(stream, event);
  }

  private remove(stream: RowStream, jobId: string): void {
    if (stream.held) return;
    stream.shown.delete(jobId);
    this.rowsSent += 1;
    this.write(stream, htmlEvent('row', removedJobRow(jobId)));
  }

  /** Writes to a stream, unless its client is too far behind: then the stream ends. */
  private write(stream: RowStream | WholeStream, text: string): void {
    if (stream.res.writableLength + Buffer.byteLength(text) > MAX_BUFFER_BYTES) {
      this.overflowed += 1;
      if ('shown' in stream) this.streams.delete(stream);
      else this.wholeStreams.delete(stream);
      stream.end();
      return;
    }
    stream.res.write(text);
  }

  private admit(userId: string): void {
    const ofUser = this.perUser.get(userId) ?? 0;
    if (ofUser >= this.limits.perUser || this.streams.size >= this.limits.total) {
      this.refused += 1;
      throw new RateLimitedError(
        ofUser >= this.limits.perUser
          ? `you have ${ofUser} live lists open, the most allowed; close a tab or retry later`
          : 'the server has as many live lists open as it allows; retry later',
        RETRY_AFTER_S,
        'too_many_streams',
      );
    }
    this.perUser.set(userId, ofUser + 1);
  }

  private release(userId: string): void {
    const count = (this.perUser.get(userId) ?? 1) - 1;
    if (count > 0) this.perUser.set(userId, count);
    else this.perUser.delete(userId);
  }
}
