import {
  Backoff,
  isTransient,
  type RetryClock,
  retry,
  systemClock,
  TrellisApiError,
  type TrellisClient,
  TrellisConnectionError,
} from '@trellis/client';
import type { ClaimAnswer as ClaimedJob, HeartbeatAnswerView } from '@trellis/client';
import { type AgentLogger, describeError } from '../logging/AgentLogger.js';
import type { JobOutcome, JobRunner } from '../job/JobRunner.js';
import type { AgentMetrics } from '../observability/AgentMetrics.js';
import { agentTracer } from '../observability/tracing.js';
import { AGENT_VERSION } from '../version.js';
import { AGENT_FEATURES } from '@trellis/core/agent';
import { type FenceChange, type FenceChangeDetails, LeaseFence, type PhaseGate } from './LeaseFence.js';
import type { NextClaim } from './NextClaim.js';

export type ShutdownMode = 'finish' | 'cancel';

/** While fenced, the agent heartbeats this often at most, each heartbeat given up after as long. */
export const FENCED_HEARTBEAT_MS = 5_000;

export interface AgentOptions {
  client: TrellisClient;
  logger: AgentLogger;
  /**
   * `gate`: what the runner's engine commands wait on while the agent is fenced; `nextClaim`: the
   * claim its final report may carry for the same slot (issue 31).
   */
  createRunner: (claimed: ClaimedJob, gate: PhaseGate, nextClaim: NextClaim) => JobRunner;
  /** Jobs run at once (one claim loop each). */
  concurrency: number;
  /** Claim and run at most one job, then exit (for CI). */
  once: boolean;
  /** Seconds a claim long-polls (at most 30). */
  claimWaitS: number;
  /** Heartbeat interval; null = the interval the control plane asks for (30 s by default). */
  heartbeatIntervalS: number | null;
  version?: string;
  backoff?: () => Backoff;
  /** Time for the claim backoff and the heartbeat interval; the real clock by default. */
  clock?: RetryClock;
  /** Counts jobs, claims and reconnects (`--metrics-port`); absent: nothing is counted. */
  metrics?: AgentMetrics;
}

/** What `run` ends with; the CLI turns it into the exit code. */
export interface AgentResult {
  /** `unauthorized`: the control plane refused the worker's credentials (destroyed or wrong). */
  reason: 'stopped' | 'once' | 'unauthorized';
  outcomes: JobOutcome[];
}

/**
 * The daemon: heartbeats (the first at start, then every interval), claim loops that long-poll
 * for work with jittered backoff while the control plane is unreachable, and a runner per job.
 * `shutdown('finish')` stops claiming and lets running jobs end; `shutdown('cancel')` also
 * interrupts them. An agent whose heartbeats go unanswered for most of the control plane's
 * lost-job timeout fences itself (`LeaseFence`): it claims nothing and its jobs start no engine
 * command until a heartbeat is answered again.
 */
export class Agent {
  private readonly stopping = new AbortController();
  /** `shutdown('cancel')` was asked: a job that arrives with a final report's answer stops at once. */
  private cancelling = false;
  private readonly runners = new Map<string, JobRunner>();
  private readonly outcomes: JobOutcome[] = [];
  private readonly heartbeatStop = new AbortController();
  private readonly clock: RetryClock;
  private intervalS: number;
  private unauthorized = false;
  /** Claims sent and not yet answered (or failed), across the claim loops. */
  private claimsInFlight = 0;
  /** Jobs whose claim was answered and whose runner is not registered yet. */
  private readonly claimedIds = new Set<string>();
  /** A claim failed in a way its request may have been taken (the answer lost): reconcile before the next. */
  private claimMayBeUnanswered = false;
  /** The reconciliation under way, which claims of every loop wait for. */
  private reconciling: Promise<void> | null = null;
  private helloDoneResolve: () => void = () => {};
  private readonly helloDone = new Promise<void>((resolve) => {
    this.helloDoneResolve = resolve;
  });
  /** The agent's lease on its jobs: fenced past most of the lost-job timeout without an answered heartbeat. */
  private readonly fence: LeaseFence;
  /** Aborts the claims on the way when the agent fences itself (a new one after each). */
  private claimsFenced = new AbortController();

  constructor(private readonly options: AgentOptions) {
    this.intervalS = options.heartbeatIntervalS ?? 30;
    this.clock = options.clock ?? systemClock;
    this.fence = new LeaseFence(this.clock, (change, details) => this.fenceChanged(change, details));
  }

  /** Whether the agent is fenced now (it claims nothing and starts no engine command). */
  get fenced(): boolean {
    return this.fence.fenced;
  }

  async run(): Promise<AgentResult> {
    const { logger } = this.options;
    logger.info('agent started', {
      version: this.options.version ?? AGENT_VERSION,
      concurrency: this.options.concurrency,
      once: this.options.once,
      server: this.options.client.baseUrl,
    });
    const heartbeats = (async () => {
      if (await this.hello()) await Promise.all([this.heartbeatLoop(), this.fenceLoop()]);
    })();
    await this.helloDone;
    const slots = this.options.once ? 1 : Math.max(1, this.options.concurrency);
    if (!this.stopping.signal.aborted) {
      await Promise.all(Array.from({ length: slots }, (_, slot) => this.claimLoop(slot)));
    }
    this.heartbeatStop.abort();
    await heartbeats;
    const reason = this.unauthorized ? 'unauthorized' : this.options.once ? 'once' : 'stopped';
    logger.info('agent stopped', { reason });
    return { reason, outcomes: this.outcomes };
  }

  /** Stops claiming; `cancel` also interrupts running jobs. A second call may escalate to cancel. */
  shutdown(mode: ShutdownMode): void {
    if (!this.stopping.signal.aborted) {
      this.options.logger.info('shutting down', { mode, running_jobs: this.runners.size });
      this.stopping.abort();
    }
    if (mode === 'cancel') {
      this.cancelling = true;
      for (const runner of this.runners.values()) runner.stop('shutdown');
    }
  }

  get runningJobs(): number {
    return this.runners.size;
  }

  private async claimLoop(slot: number): Promise<void> {
    const { logger } = this.options;
    const backoff = this.options.backoff?.() ?? new Backoff();
    const signal = this.stopping.signal;
    let waitingSince = this.clock.now().getTime();
    /** The next job, claimed by the last job's final report (issue 31): run even while stopping. */
    let carried: ClaimedJob | null = null;
    while (carried !== null || !signal.aborted) {
      if (carried !== null) {
        this.options.metrics?.claimed(0);
        carried = await this.runJob(carried);
        waitingSince = this.clock.now().getTime();
        continue;
      }
      let claimed: ClaimedJob | null;
      try {
        // Any failure but a refusal of the credentials is retried until the agent stops.
        claimed = await retry(() => this.claim(signal), {
          clock: this.clock,
          signal,
          backoff,
          retryable: (error) => !this.refusedCredentials(error),
          onRetry: (error, delay) => {
            this.options.metrics?.reconnect();
            const level = isTransient(error) ? 'warn' : 'error';
            logger[level]('claim failed; retrying', { slot, error: describeError(error), retry_in_ms: delay });
          },
        });
        backoff.reset();
      } catch {
        return; // stopping, or the credentials were refused
      }
      if (claimed) {
        this.options.metrics?.claimed((this.clock.now().getTime() - waitingSince) / 1000);
        carried = await this.runJob(claimed);
        waitingSince = this.clock.now().getTime();
      }
      if (this.options.once) return;
    }
  }

  /** One claim request; one that failed on the way may have been taken with its answer lost. */
  private async claim(signal: AbortSignal): Promise<ClaimedJob | null> {
    // Fenced: no claim until a heartbeat is answered again.
    await this.fence.whileFenced(signal);
    if (signal.aborted) throw new Error('the agent is stopping');
    if (this.claimMayBeUnanswered) {
      this.reconciling ??= this.reconcile(signal).finally(() => {
        this.reconciling = null;
      });
      await this.reconciling;
    }
    this.claimsInFlight++;
    const fenced = this.claimsFenced.signal;
    try {
      const claimed = await this.options.client.claimJob({
        wait: this.options.claimWaitS,
        signal: AbortSignal.any([signal, fenced]),
        features: AGENT_FEATURES,
      });
      if (claimed) this.claimedIds.add(claimed.job.id);
      return claimed;
    } catch (error) {
      if (fenced.aborted && !signal.aborted) {
        // Given up by the fence: as a claim whose connection broke, it may have been taken.
        this.claimMayBeUnanswered = true;
        throw new TrellisConnectionError(this.options.client.baseUrl, error);
      }
      if (error instanceof TrellisConnectionError) this.claimMayBeUnanswered = true;
      throw error;
    } finally {
      this.claimsInFlight--;
    }
  }

  /**
   * After a claim whose answer may have been lost (issue 30: the control plane took the job for
   * this agent, the connection broke before the answer came), tells the control plane which jobs
   * this agent runs, as its first heartbeat does: a job it claimed for this agent that the agent
   * never got ends at once (the engine never started), instead of staying `PROCESSING` while the
   * agent heartbeats. New claims wait for it, and it waits for the claims already on the way
   * (whose jobs it could not list yet) to be answered.
   */
  private async reconcile(signal: AbortSignal): Promise<void> {
    while (this.claimsInFlight > 0) {
      if (!(await this.clock.sleep(100, signal))) throw new Error('the agent is stopping');
    }
    const running = [...this.runners.keys(), ...this.claimedIds];
    const sentAt = this.clock.now();
    this.answered(await this.options.client.heartbeat(this.version, running, { afterUnansweredClaim: true }), sentAt);
    this.claimMayBeUnanswered = false;
    this.options.logger.info('told the control plane which jobs this agent runs after a claim without an answer', {
      running_jobs: running.length,
    });
  }

  /**
   * Runs the job in a span `job <TYPE>` with `trellis.job_id` (the claim's request span carries
   * the same id); its requests to the control plane carry the span as `traceparent`.
   */
  private runJob(claimed: ClaimedJob): Promise<ClaimedJob | null> {
    const { job } = claimed;
    const attributes = { 'trellis.job_id': job.id, 'trellis.job_type': job.job_type };
    return agentTracer.startActiveSpan(`job ${job.job_type}`, { attributes }, async (span) => {
      const started = this.clock.now().getTime();
      let next: ClaimedJob | null = null;
      const runner = this.options.createRunner(
        claimed,
        this.fence,
        this.nextClaim((claimedNext) => {
          next = claimedNext;
        }),
      );
      this.runners.set(job.id, runner);
      this.claimedIds.delete(job.id);
      // Arrived with a final report's answer after a shutdown that cancels: it ends at once.
      if (this.cancelling) runner.stop('shutdown');
      let outcome: JobOutcome = 'FAILED';
      try {
        outcome = await runner.run();
      } catch (error) {
        this.options.logger.error('job runner crashed', { job_id: job.id, error: describeError(error) });
      } finally {
        this.runners.delete(job.id);
        this.outcomes.push(outcome);
        this.options.metrics?.jobFinished(job.job_type, outcome, (this.clock.now().getTime() - started) / 1000);
        span.setAttribute('trellis.job_outcome', outcome);
        span.end();
      }
      return next;
    });
  }

  /**
   * The claim a job's final report carries for its slot (`NextClaim`), when the agent would claim
   * next anyway: not stopping, not `--once`, not fenced, no reconciliation due. While the report is
   * on its way it counts as a claim on its way (a reconciliation waits for it); the job it brings
   * is this agent's from then on, as a claim's is, and goes to `take`.
   */
  private nextClaim(take: (claimed: ClaimedJob) => void): NextClaim {
    return {
      begin: () => {
        if (this.stopping.signal.aborted || this.options.once || this.fence.fenced) return null;
        if (this.claimMayBeUnanswered || this.reconciling) return null;
        this.claimsInFlight++;
        return AGENT_FEATURES;
      },
      end: (claimed, mayBeLost) => {
        this.claimsInFlight--;
        if (mayBeLost) this.claimMayBeUnanswered = true;
        if (claimed) {
          this.claimedIds.add(claimed.job.id);
          take(claimed);
        }
      },
    };
  }

  /**
   * The first heartbeat, retried until the control plane answers, before anything is claimed:
   * it says this process runs no job yet, so the jobs a previous process with these credentials
   * was running (killed, crashed) end at once and their state locks are released.
   */
  private async hello(): Promise<boolean> {
    const { logger } = this.options;
    const backoff = this.options.backoff?.() ?? new Backoff();
    let sentAt = this.clock.now();
    try {
      const answer = await retry(
        () => {
          sentAt = this.clock.now();
          return this.options.client.heartbeat(this.version, [...this.runners.keys()]);
        },
        {
          clock: this.clock,
          signal: this.stopping.signal,
          backoff,
          retryable: (error) => !this.refusedCredentials(error),
          onRetry: (error, delay) => {
            this.options.metrics?.reconnect();
            logger.warn('heartbeat failed', { error: describeError(error), retry_in_ms: delay });
          },
        },
      );
      this.answered(answer, sentAt);
      return true;
    } catch {
      return false; // stopping, or the credentials were refused
    } finally {
      this.helloDoneResolve();
    }
  }

  private get version(): string {
    return this.options.version ?? AGENT_VERSION;
  }

  /** A heartbeat sent at `sentAt` was answered: the lease is renewed from then. */
  private answered(answer: HeartbeatAnswerView, sentAt: Date): void {
    if (this.options.heartbeatIntervalS === null && answer.heartbeat_interval_s > 0) {
      this.intervalS = answer.heartbeat_interval_s;
    }
    this.fence.renew(sentAt, answer.lost_job_timeout_s);
    for (const id of answer.cancel_job_ids) this.runners.get(id)?.stop('cancelled');
    this.options.logger.debug('heartbeat', { running_jobs: this.runners.size });
  }

  /**
   * A heartbeat every interval until the claim loops end. While fenced, one every
   * {@link FENCED_HEARTBEAT_MS} at most, each given up after as long: the agent resumes soon after
   * the link heals, not after a heartbeat held on a dead connection times out.
   */
  private async heartbeatLoop(): Promise<void> {
    const interval = () =>
      this.fence.fenced ? Math.min(this.intervalS * 1000, FENCED_HEARTBEAT_MS) : this.intervalS * 1000;
    while (await this.clock.sleep(interval(), this.heartbeatStop.signal)) await this.heartbeat();
  }

  /**
   * Decides the fence again each second (at once when it is due), so the agent fences itself
   * when the time comes, not at its next claim or engine command.
   */
  private async fenceLoop(): Promise<void> {
    for (;;) {
      const left = this.fence.msUntilFence();
      const wait = left === null || left <= 0 ? 1000 : Math.min(1000, Math.ceil(left));
      if (!(await this.clock.sleep(wait, this.heartbeatStop.signal))) return;
      this.fence.update();
    }
  }

  /** One line when the agent fences itself, one when it resumes; a fence aborts the claims on the way. */
  private fenceChanged(change: FenceChange, details: FenceChangeDetails): void {
    const fields = {
      silent_s: Math.round(details.silentMs / 1000),
      lost_job_timeout_s: details.lostJobTimeoutS,
      running_jobs: this.runners.size,
    };
    if (change === 'fenced') {
      this.options.logger.warn(
        'fenced: no heartbeat answered for most of the lost-job timeout; claiming nothing and starting no engine command until the control plane answers (running commands go on)',
        fields,
      );
      this.claimsFenced.abort();
      this.claimsFenced = new AbortController();
    } else {
      this.options.logger.info(
        'fence lifted: the control plane answers again; claiming and engine commands resume',
        fields,
      );
    }
  }

  /** One heartbeat; its answer names jobs of this agent that were cancelled. */
  private async heartbeat(): Promise<void> {
    const { client, logger } = this.options;
    const sentAt = this.clock.now();
    try {
      const probe = this.fence.fenced ? { timeoutMs: FENCED_HEARTBEAT_MS } : {};
      this.answered(await client.heartbeat(this.version, undefined, probe), sentAt);
    } catch (error) {
      if (this.refusedCredentials(error)) return;
      logger.warn('heartbeat failed', { error: describeError(error) });
    }
  }

  /** A `401`: this worker no longer exists for the control plane; stop everything. */
  private refusedCredentials(error: unknown): boolean {
    if (!(error instanceof TrellisApiError) || error.status !== 401) return false;
    if (!this.unauthorized) {
      this.unauthorized = true;
      this.options.logger.error('the control plane refused this worker’s credentials; stopping', {
        code: error.code,
      });
      this.shutdown('cancel');
    }
    return true;
  }
}
