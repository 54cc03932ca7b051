import type { JobEvent } from '../domain/jobStateMachine.js';

/**
 * Why a job ended, as data: which moves of the job state machine each reason makes, whether it
 * is audited (every end the agent running the job did not report itself is), whether it
 * releases the vine's state lock, and the job's `error_message` when the caller gives none.
 * Hooks name these reasons in their `on` lists.
 */
export interface EndReasonRule {
  /** The events of `transitionJob` this reason may use. */
  readonly events: readonly JobEvent[];
  /** Whether the end is written to the audit log (`job.cancel` or `job.fail`, by the actor given). */
  readonly audited: boolean;
  /**
   * Whether the vine's state lock is released with a `PROCESSING` job's end: the engine that
   * holds it can no longer release it (it exited, or its agent is gone), and one job runs per
   * vine, so the lock is that engine's and would otherwise hold the vine's next job forever.
   * `when_agent_offline`: only when the job's agent is offline (silent past the heartbeat
   * timeout, or destroyed); an online agent's engine is winding down and releases it itself.
   * A lock a person took through the Terraform Cloud protocol is never released this way.
   */
  readonly releasesStateLock: boolean | 'when_agent_offline';
  /** The `error_message` by the event, when the caller gives none (a success keeps the job's). */
  readonly messages: Readonly<Partial<Record<JobEvent, string>>>;
}

export const JOB_END_REASONS = {
  /**
   * The agent that claimed the job reported its end: SUCCESS, FAILED or CANCELLED. It reports
   * only once its engine has exited, so a lock that engine left (it crashed, or was killed) is
   * released: no one else can release it.
   */
  reported: {
    events: ['report_success', 'report_failed', 'report_cancelled'],
    audited: false,
    releasesStateLock: true,
    messages: { report_failed: 'the job failed', report_cancelled: 'cancelled by the agent' },
  },
  /** The control plane could not answer the claim of a job it had taken (an identity token it could not issue). */
  start_failed: {
    events: ['start_failed'],
    audited: true,
    releasesStateLock: false,
    messages: { start_failed: 'the control plane could not start the job' },
  },
  /**
   * Its vine's connection needs reconnecting (issue 23): the person who connected it is no longer
   * an admin of the owner, so the control plane does not fetch the commit with their token.
   */
  needs_reconnect: {
    events: ['start_failed'],
    audited: true,
    releasesStateLock: false,
    messages: {
      start_failed:
        'needs_reconnect: the person who connected this configuration is no longer an admin of its owner; an admin connects it again',
    },
  },
  /** The control plane could not make the job's configuration version (the provider's archive of its commit). */
  source_unavailable: {
    events: ['start_failed'],
    audited: true,
    releasesStateLock: false,
    messages: { start_failed: "the control plane could not fetch the job's commit from the git provider" },
  },
  /**
   * The agent that claimed it lacks what it needs (issue 27): an uploaded configuration, or run
   * options (`-target`, `-replace`, `-refresh-only`, `-refresh=false`) it would silently ignore.
   */
  agent_outdated: {
    events: ['start_failed'],
    audited: true,
    releasesStateLock: false,
    messages: { start_failed: 'the agent that claimed this job is too old to run it; upgrade it' },
  },
  /** The agent running it was silent for longer than the lost-job timeout. */
  agent_lost: {
    events: ['agent_lost'],
    audited: true,
    releasesStateLock: true,
    messages: { agent_lost: 'the agent running this job was lost' },
  },
  /**
   * Its agent started again (a restart, or a crash and a new process with the same credentials)
   * and said it runs none of it: the engine that ran it died with the old process.
   */
  agent_restarted: {
    events: ['agent_lost'],
    audited: true,
    releasesStateLock: true,
    messages: { agent_lost: 'the agent running this job restarted: the job ended with its old process' },
  },
  /** A person cancelled it (queued or running). */
  cancelled_by_person: {
    events: ['cancel'],
    audited: true,
    releasesStateLock: 'when_agent_offline',
    messages: { cancel: 'cancelled by user' },
  },
  /**
   * Its agent was destroyed: a queued job assigned to it could never run (cancelled), a job it
   * was running can never report (failed, at once rather than at the lost-agent sweep).
   */
  agent_destroyed: {
    events: ['cancel', 'agent_lost'],
    audited: true,
    releasesStateLock: true,
    messages: {
      cancel: 'cancelled: the agent this job was assigned to was destroyed',
      agent_lost: 'the agent running this job was destroyed',
    },
  },
  /** A newer commit of its pull request was pushed: the older queued plan is cancelled. */
  superseded: {
    events: ['cancel'],
    audited: true,
    releasesStateLock: false,
    messages: { cancel: 'cancelled: a newer commit of its pull request was pushed' },
  },
  /** A queued drift check gave way to a job queued on its vine. */
  gave_way: {
    events: ['cancel'],
    audited: true,
    releasesStateLock: false,
    messages: { cancel: 'cancelled: a job was queued on the configuration after this drift check' },
  },
} as const satisfies Record<string, EndReasonRule>;

export type EndReason = keyof typeof JOB_END_REASONS;

export const END_REASONS = Object.keys(JOB_END_REASONS) as EndReason[];

/** The rule of `reason`. */
export function endReasonRule(reason: EndReason): EndReasonRule {
  return JOB_END_REASONS[reason];
}
