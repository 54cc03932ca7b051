import type { ProviderMirrorMode } from './cliConfig.js';
import { join } from 'node:path';
import {
  type RetryClock,
  retry,
  systemClock,
  TrellisApiError,
  type TrellisClient,
  TrellisConnectionError,
} from '@trellis/client';
import type { AgentJobView as Job, ClaimAnswer as ClaimedJob } from '@trellis/client';
import type { JsonObject, ReportableJobStatus } from '@trellis/core';
import type { AssumeRole } from '../cloud/assumeRole.js';
import type { PhaseGate } from '../daemon/LeaseFence.js';
import type { NextClaim } from '../daemon/NextClaim.js';
import { type AgentLogger, describeError } from '../logging/AgentLogger.js';
import { JobLog } from '../logs/JobLog.js';
import { LogShipper } from '../logs/LogShipper.js';
import { SecretSet } from '../logs/Redactor.js';
import { AGENT_VERSION } from '../version.js';
import { agentDiskFull, isDiskFullError, JobFailure, JobInterrupted } from './errors.js';
import { pushErroredState } from './erroredState.js';
import { JobSteps } from './JobSteps.js';
import type { WarmWorkspaces } from './WarmWorkspaces.js';
import { Workspace } from './Workspace.js';

export interface RunnerSettings {
  serverUrl: string;
  workerId: string;
  workerToken: string;
  workDir: string;
  /** `--engine-bin` / `TRELLIS_ENGINE_BIN`; else `tofu`/`terraform` from PATH. */
  engineBin?: string | undefined;
  /** `--opa-bin` / `TRELLIS_OPA_BIN`; else `opa` from PATH: evaluates the policies of plans. */
  opaBin?: string | undefined;
  /** SIGINT → SIGKILL grace period. */
  graceMs: number;
  lockTimeoutS: number;
  logIntervalMs?: number;
  /** How long the final status report is retried while the control plane is unreachable. */
  statusRetryMs?: number;
  /** `--allow-file-sources` / `TRELLIS_ALLOW_FILE_SOURCES`: clone `file://` git sources. */
  allowFileSources?: boolean;
  /** The host environment the engine starts from (default `process.env`). */
  hostEnv?: NodeJS.ProcessEnv;
  /** `--provider-mirror` / `TRELLIS_AGENT_PROVIDER_MIRROR`: whether jobs install providers from their owner's mirror. */
  providerMirror?: ProviderMirrorMode;
  /** Where the engine caches providers across jobs (`--plugin-cache`); null or absent: no cache. */
  pluginCacheDir?: string | null;
  /** How many jobs the agent runs side by side (Terraform's plugin cache is not safe for more than one). */
  concurrency?: number;
}

export interface RunnerDeps {
  client: TrellisClient;
  settings: RunnerSettings;
  logger: AgentLogger;
  assumeRole: AssumeRole;
  /** Time for the retries of control-plane calls; the real clock by default. */
  clock?: RetryClock;
  /** The agent's fence: engine commands wait while it is fenced (none: they never wait). */
  gate?: PhaseGate;
  /** The plans' workspaces kept for their DEPLOYs (issue 31); none: every job starts from nothing. */
  warm?: WarmWorkspaces;
  /** The next claim the final report may carry (issue 31); none: the report claims nothing. */
  nextClaim?: NextClaim;
}

/** How a job ended from this agent's point of view; `LOST` = the control plane took it away. */
export type JobOutcome = 'SUCCESS' | 'FAILED' | 'CANCELLED' | 'LOST';

export type StopReason = 'cancelled' | 'shutdown' | 'lost';

const STOP_MESSAGES: Record<StopReason, string> = {
  cancelled: 'the job was cancelled: interrupting the engine',
  shutdown: 'the agent is shutting down: interrupting the engine',
  lost: 'the control plane no longer lets this agent run the job: stopping the engine',
};

/**
 * Runs one claimed job from start to end: a fresh workspace, the engine commands of its type,
 * the log shipped as it goes, and exactly one final status report, sent after the last log
 * chunk (the server takes no logs after `SUCCESS`/`FAILED`).
 */
export class JobRunner {
  readonly job: Job;
  private readonly secrets = new SecretSet();
  private readonly shipper: LogShipper;
  private readonly log: JobLog;
  private readonly logger: AgentLogger;
  private readonly steps: JobSteps;
  private stopReason: StopReason | null = null;
  /** The job was lost while the engine applied: the apply runs to its end, nothing after it. */
  private finishingApply = false;

  constructor(
    private readonly deps: RunnerDeps,
    claimed: ClaimedJob,
  ) {
    this.job = claimed.job;
    this.logger = deps.logger.child({ job_id: this.job.id, job_type: this.job.job_type });
    this.secrets.add(deps.settings.workerToken);
    this.shipper = new LogShipper({
      api: deps.client,
      jobId: this.job.id,
      logger: this.logger,
      onJobStatus: (status) => {
        if (status === 'CANCELLED') this.stop('cancelled');
      },
      onJobGone: () => this.stop('lost'),
      // Past the memory limit the log waits here rather than holding the engine back.
      spoolPath: join(deps.settings.workDir, `log-spool-${this.job.id}`),
      ...(deps.clock ? { clock: deps.clock } : {}),
    });
    this.log = new JobLog(this.shipper, this.secrets, deps.settings.logIntervalMs ?? 1000);
    this.steps = new JobSteps({ ...deps, log: this.log, secrets: this.secrets, claimed, logger: this.logger });
  }

  /**
   * Stops the job: SIGINT to the engine (SIGKILL after the grace period), no further step. A job
   * the control plane ended (`lost`) while its engine applies or destroys is the exception
   * (issue 30): interrupting would leave infrastructure half changed, so the command runs to its
   * end, writes its state as a late write of the job (which the control plane keeps: `after_lost`
   * or a `rejected` version; else the agent pushes its errored.tfstate), and nothing runs after
   * it. A shutdown that cancels still interrupts it.
   */
  stop(reason: StopReason): void {
    if (this.stopReason !== null) {
      if (this.finishingApply && reason === 'shutdown') {
        this.finishingApply = false;
        this.logger.warn('the agent is shutting down: interrupting the apply of the lost job');
        this.steps.interrupt();
      }
      return;
    }
    this.stopReason = reason;
    if (reason === 'lost' && this.steps.changingInfrastructure) {
      this.finishingApply = true;
      this.logger.warn(
        'the control plane ended the job while the engine applies: letting the apply finish so its state is stored, then stopping',
      );
      this.steps.stopAfterCurrent();
      return;
    }
    this.logger.info('stopping the job', { reason });
    if (reason !== 'lost') this.log.system(STOP_MESSAGES[reason]);
    this.steps.interrupt();
  }

  get stopping(): StopReason | null {
    return this.stopReason;
  }

  async run(): Promise<JobOutcome> {
    const { job } = this;
    const vine = job.config_snapshot.vine;
    this.logger.info('job started', { vine_id: job.vine_id });
    this.log.start();
    this.log.system(
      `trellis-agent ${AGENT_VERSION} runs ${job.job_type} job ${job.id}${vine ? ` of ${vine.name}` : ''} on worker ${this.deps.settings.workerId}`,
    );
    let workspace: Workspace | null = null;
    let outcome: JobOutcome | null = null;
    try {
      // A DEPLOY of a plan this agent ran and kept runs in that plan's workspace (issue 31).
      const kept = this.deps.warm?.take(job) ?? null;
      workspace = kept ? kept.workspace : new Workspace(this.deps.settings.workDir, job.id);
      if (kept) this.logger.info('deploying in the kept workspace of its plan', { plan_job_id: kept.planJobId });
      const metadata = await this.steps.execute(workspace, kept);
      // An apply the job's loss let finish (a DESTROY's last step): nothing to report.
      if (this.stopReason === 'lost') return await this.lost(null);
      outcome = await this.finish('SUCCESS', { execution_metadata: metadata });
      return outcome;
    } catch (error) {
      if (this.stopReason === 'lost' || this.shipper.jobGone) return await this.lost(error);
      if (error instanceof JobInterrupted || this.stopReason !== null) {
        const message =
          this.stopReason === 'shutdown' ? 'cancelled: the agent was stopped' : 'cancelled: the engine was interrupted';
        return await this.finish('CANCELLED', { error_message: message });
      }
      const failure =
        !(error instanceof JobFailure) && isDiskFullError(error)
          ? agentDiskFull(describeError(error), this.deps.settings.workDir)
          : error;
      const message = failure instanceof JobFailure ? failure.message : `agent error: ${describeError(error)}`;
      if (failure instanceof JobFailure && failure !== error) {
        this.logger.error('job failed: the work directory is full', { error: describeError(error) });
      } else if (!(failure instanceof JobFailure)) {
        this.logger.error('job failed in the agent', { error: describeError(error) });
      }
      this.log.system(`job failed: ${message}`);
      const metadata = failure instanceof JobFailure ? failure.metadata : null;
      return await this.finish('FAILED', {
        error_message: this.secrets.redact(message),
        ...(metadata ? { execution_metadata: metadata } : {}),
      });
    } finally {
      await this.pushErroredState();
      if (workspace) this.keepOrRemove(workspace, outcome);
    }
  }

  /** A succeeded PLAN's workspace is kept for its DEPLOY when the agent keeps any (issue 31); else removed. */
  private keepOrRemove(workspace: Workspace, outcome: JobOutcome | null): void {
    const made = this.steps.madePlan;
    const { job } = this;
    if (this.deps.warm && outcome === 'SUCCESS' && job.job_type === 'PLAN' && job.vine_id !== null && made) {
      try {
        this.deps.warm.keep({
          vineId: job.vine_id,
          planJobId: job.id,
          configHash: job.config_hash,
          planSha256: made.planSha256,
          workspace,
          dir: made.dir,
          ownBackend: made.ownBackend,
          planFile: made.planFile,
        });
        return;
      } catch (error) {
        this.logger.warn('could not keep the plan workspace; removing it', { error: describeError(error) });
      }
    }
    workspace.remove();
  }

  /** The control plane ended the job (it was lost): no report, the rest of the log is dropped. */
  private async lost(error: unknown): Promise<JobOutcome> {
    await this.log.close(1000);
    this.logger.warn('job lost: the control plane ended it', {
      ...(error === null ? {} : { error: describeError(error) }),
      ...(this.finishingApply ? { apply_finished: true } : {}),
    });
    return 'LOST';
  }

  /** The final state the engine could not store, pushed once the job's end is reported (issue 30). */
  private async pushErroredState(): Promise<void> {
    const state = this.steps.stateOfControlPlane;
    if (!state || this.job.vine_id === null) return;
    try {
      await pushErroredState(
        {
          client: this.deps.client,
          logger: this.logger,
          timeoutMs: this.deps.settings.statusRetryMs ?? 10 * 60_000,
          ...(this.deps.clock ? { clock: this.deps.clock } : {}),
        },
        {
          ...state,
          jobId: this.job.id,
          workerId: this.deps.settings.workerId,
          keepDir: this.deps.settings.workDir,
        },
      );
    } catch (error) {
      this.logger.error('could not handle the errored state', { error: describeError(error) });
    }
  }

  /** Ships the rest of the log, then reports the final status (a `409` means it already ended). */
  private async finish(
    status: Exclude<ReportableJobStatus, 'PROCESSING'>,
    report: { execution_metadata?: JsonObject; error_message?: string },
  ): Promise<JobOutcome> {
    if (status === 'SUCCESS') this.log.system('job succeeded');
    await this.log.close();
    const sent = await this.report(status, report);
    if (sent === 'refused' && status === 'SUCCESS') {
      // A report the control plane rejects (e.g. outputs it cannot store) must not leave the job running.
      await this.report('FAILED', { error_message: 'the control plane refused the result of the job' });
      return 'FAILED';
    }
    this.logger.info('job ended', {
      status,
      shipped_bytes: this.shipper.stats.bytes,
      log_requests: this.shipper.stats.requests,
    });
    if (sent === 'ended') return status === 'CANCELLED' ? 'CANCELLED' : 'LOST';
    return status;
  }

  /**
   * The final report, retried while the control plane is unreachable. It carries the agent's next
   * claim when the agent takes one (`NextClaim`): the answer's job goes to the claim loop.
   */
  private async report(
    status: Exclude<ReportableJobStatus, 'PROCESSING'>,
    report: { execution_metadata?: JsonObject; error_message?: string },
  ): Promise<'sent' | 'ended' | 'refused'> {
    const features = this.deps.nextClaim?.begin() ?? null;
    const options = features ? { claimNext: features } : {};
    let next: ClaimedJob | null = null;
    let mayBeLost = false;
    try {
      const answer = await retry(() => this.deps.client.reportStatus(this.job.id, { status, ...report }, options), {
        clock: this.deps.clock ?? systemClock,
        timeoutMs: this.deps.settings.statusRetryMs ?? 10 * 60_000,
        onRetry: (error, delay) => {
          // The request may have been taken, its claim with it, and only the answer lost.
          if (error instanceof TrellisConnectionError) mayBeLost = true;
          this.logger.warn('status report failed; retrying', {
            status,
            error: describeError(error),
            retry_in_ms: delay,
          });
        },
      });
      next = answer.next_claim ?? null;
      return 'sent';
    } catch (error) {
      if (error instanceof TrellisConnectionError) mayBeLost = true;
      if (error instanceof TrellisApiError && error.status === 409) {
        this.logger.info('the job had already ended on the control plane', { reported: status, code: error.code });
        return 'ended';
      }
      this.logger.error('could not report the job status', { status, error: describeError(error) });
      return 'refused';
    } finally {
      if (features) this.deps.nextClaim?.end(next, mayBeLost);
    }
  }
}
