import type { JobStatus } from '../domain/enums.js';
import type { Job, Vine } from '../domain/records.js';
import type { Stores } from '../ports/UnitOfWork.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import type { EndReason } from './endReasons.js';
import type { JobLifecycle } from './JobLifecycle.js';

/**
 * What happened to a job: it was queued, it went back in the queue (`requeued`: the agent never
 * got the answer to its claim), or it ended for one of the end reasons.
 */
export type JobMoment = 'queued' | 'requeued' | EndReason;

/** A change of a job, as a hook sees it. */
export interface JobChange {
  moment: JobMoment;
  /** The job's status before the change (null when it was just queued). */
  from: JobStatus | null;
  /** When the change happened (the clock's time at the change). */
  at: string;
  /**
   * The job's vine as the change left it, when the change moved it (an end of a job that ran):
   * its move written and read back in the change's unit of work, so a hook that needs the vine
   * takes it here rather than reading it again. No hook changes a vine's configuration.
   */
  vine?: Vine;
}

/** What a hook works with: the change's unit of work, and the lifecycle to queue or end other jobs in it. */
export interface JobHookContext {
  stores: Stores;
  deps: CoreDeps;
  lifecycle: JobLifecycle;
  /** Runs `effect` once the unit of work has committed (announcements, caches); never when it rolls back. */
  afterCommit(effect: () => Promise<void> | void): void;
}

/**
 * A side effect of queuing or ending a job, run by the lifecycle in the unit of work of the
 * change (so it commits with the change or not at all) for each moment in `on`. A hook that
 * reacts to one kind of job (a DEPLOY's success) says so in `run`; which moments it reacts to
 * is said here, once.
 */
export interface JobHook {
  /** `<feature>.<effect>`, as the docs and the lifecycle test name it. */
  readonly name: string;
  readonly on: readonly JobMoment[];
  run(job: Job, change: JobChange, context: JobHookContext): Promise<void>;
}
