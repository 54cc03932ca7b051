import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { type RetryClock, retry, systemClock, TrellisApiError, type TrellisClient } from '@trellis/client';
import { type AgentLogger, describeError } from '../logging/AgentLogger.js';

/** Where OpenTofu (and Terraform) leave a final state they could not write to the backend: the working directory. */
export const ERRORED_STATE_FILE = 'errored.tfstate';

export interface ErroredStateTarget {
  /** The engine's working directory. */
  dir: string;
  vineId: string;
  jobId: string;
  workerId: string;
  /** The job's own state token: the control plane takes a late write only with it (issue 30). */
  stateToken: string;
  /** Where the file is kept when it cannot be pushed (outside the workspace, which is removed). */
  keepDir: string;
}

export interface ErroredStateDeps {
  client: TrellisClient;
  logger: AgentLogger;
  clock?: RetryClock;
  /** How long the push is retried while the control plane is unreachable. */
  timeoutMs: number;
}

export type ErroredStateOutcome = 'none' | 'stored' | 'rejected' | 'kept';

/**
 * Never lose the state of resources the engine created (issue 30): when the engine could not
 * store its final state (the control plane was unreachable through its retries) it wrote
 * `errored.tfstate`; the agent pushes it to the job's state endpoint, retrying until the control
 * plane answers. The control plane judges it as any late write of the job: the current state
 * (`after_lost`, for a person to review) when no later job had the configuration, else a
 * `rejected` version kept for recovery. A push that still fails leaves the file in `keepDir`.
 */
export async function pushErroredState(
  deps: ErroredStateDeps,
  target: ErroredStateTarget,
): Promise<ErroredStateOutcome> {
  const file = join(target.dir, ERRORED_STATE_FILE);
  if (!existsSync(file)) return 'none';
  const state = readFileSync(file);
  const logger = deps.logger;
  logger.warn('the engine could not store its final state; pushing its errored.tfstate', { bytes: state.length });
  try {
    await retry(
      () => deps.client.writeState(target.vineId, state, { username: target.workerId, password: target.stateToken }),
      {
        clock: deps.clock ?? systemClock,
        timeoutMs: deps.timeoutMs,
        onRetry: (error, delay) =>
          logger.warn('errored state push failed; retrying', { error: describeError(error), retry_in_ms: delay }),
      },
    );
    logger.info('stored the errored state as a version of the configuration state');
    return 'stored';
  } catch (error) {
    if (error instanceof TrellisApiError && error.code === 'state_rejected') {
      logger.warn('the errored state was kept as a rejected version: a later job has the configuration', {
        error: describeError(error),
      });
      return 'rejected';
    }
    const kept = join(target.keepDir, `errored-${target.jobId}.tfstate`);
    renameSync(file, kept);
    logger.error('could not push the errored state; it is kept for recovery', {
      path: kept,
      error: describeError(error),
    });
    return 'kept';
  }
}
