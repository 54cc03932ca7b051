import type { EventBus, Job, LogChunk, UseCases } from '@trellis/core';

/** What the hub tells every follower of a job: new chunks in id order, and the job when it changed. */
export interface JobUpdate {
  chunks: LogChunk[];
  job: Job | null;
}

interface Follow {
  ownerId: string;
  /** The id up to which the hub has read; null until a follower reports where its backlog ended. */
  cursor: number | null;
  listeners: Set<(update: JobUpdate) => void>;
  logsDirty: boolean;
  statusDirty: boolean;
  pumping: boolean;
}

const PAGE = 1000;
/** How often every follow is read again even without an event (events are best effort). */
export const RECHECK_SECONDS = 5;

/**
 * One reader per followed job and owner in this process. Each log or status event of the job
 * causes ONE read of the new chunks (and of the job when its status changed), handed to every
 * follower, instead of one read per open stream — with a hundred people watching a deployment,
 * that is the difference between one query and a hundred per chunk.
 *
 * Follows are keyed by owner AND job, and the hub reads as that owner: a follower can only ever
 * join the reader of its own user, so nobody else's request (refused or not) can take over or
 * stop the reader behind someone's stream. Callers authorize (read the job as the user) before
 * they follow.
 */
export class JobLogHub {
  /** job id → owner id → the reader of that owner's followers of the job. */
  private readonly follows = new Map<string, Map<string, Follow>>();

  constructor(
    private readonly useCases: UseCases,
    events: EventBus,
  ) {
    events.subscribe((event) => {
      if (event.type !== 'job_status_changed' && event.type !== 'log_appended') return;
      const owners = this.follows.get(event.job_id);
      if (!owners) return;
      for (const follow of owners.values()) {
        if (event.type === 'job_status_changed') follow.statusDirty = true;
        follow.logsDirty = true;
        this.pump(event.job_id, follow);
      }
    });
  }

  /** Starts delivering updates of the owner's job to `listener`; call the returned function to stop. */
  follow(ownerId: string, jobId: string, listener: (update: JobUpdate) => void): () => void {
    let owners = this.follows.get(jobId);
    if (!owners) {
      owners = new Map();
      this.follows.set(jobId, owners);
    }
    let follow = owners.get(ownerId);
    if (!follow) {
      const created: Follow = {
        ownerId,
        cursor: null,
        listeners: new Set(),
        logsDirty: false,
        statusDirty: false,
        pumping: false,
      };
      owners.set(ownerId, created);
      follow = created;
    }
    const current = follow;
    current.listeners.add(listener);
    return () => {
      current.listeners.delete(listener);
      const entries = this.follows.get(jobId);
      if (current.listeners.size === 0 && entries?.get(ownerId) === current) {
        entries.delete(ownerId);
        if (entries.size === 0) this.follows.delete(jobId);
      }
    };
  }

  /**
   * A follower read the backlog up to `lastId` after it started following: the hub reads on from
   * there when it has no position yet. Followers drop chunks they already sent, so overlap is fine.
   */
  backlogRead(ownerId: string, jobId: string, lastId: number): void {
    const follow = this.follows.get(jobId)?.get(ownerId);
    if (!follow || follow.cursor !== null) return;
    follow.cursor = lastId;
    this.pump(jobId, follow);
  }

  /**
   * Reads every followed job again, events or not: a lost event delays a chunk until then and never
   * loses it. One local background task runs it for all follows (`LiveLogStreams.tasks()`).
   */
  recheck(): void {
    for (const [jobId, owners] of this.follows) {
      for (const follow of owners.values()) {
        follow.logsDirty = true;
        follow.statusDirty = true;
        this.pump(jobId, follow);
      }
    }
  }

  /** How many (owner, job) readers are running. */
  get followedJobs(): number {
    let count = 0;
    for (const owners of this.follows.values()) count += owners.size;
    return count;
  }

  private pump(jobId: string, follow: Follow): void {
    if (follow.pumping || follow.cursor === null || !(follow.logsDirty || follow.statusDirty)) return;
    follow.pumping = true;
    void (async () => {
      try {
        while (follow.logsDirty || follow.statusDirty) {
          const readStatus = follow.statusDirty;
          follow.logsDirty = false;
          follow.statusDirty = false;
          // The status is read before the chunks: an agent sends its last chunks before its final
          // status, so once a terminal status is seen, the read that follows has every chunk.
          const job = readStatus ? await this.useCases.jobs.get({ userId: follow.ownerId, email: '' }, jobId) : null;
          const chunks: LogChunk[] = [];
          for (;;) {
            const page = await this.useCases.logs.readForPerson({ userId: follow.ownerId, email: '' }, jobId, {
              after: follow.cursor,
              limit: PAGE,
            });
            chunks.push(...page.logs);
            if (page.logs.length > 0) follow.cursor = (page.logs.at(-1) as LogChunk).id;
            if (!page.has_more) break;
          }
          if (chunks.length > 0 || job) {
            for (const listener of [...follow.listeners]) listener({ chunks, job });
          }
        }
      } catch {
        // A failed read (database away) is retried by the next recheck.
      } finally {
        follow.pumping = false;
      }
    })();
  }
}
