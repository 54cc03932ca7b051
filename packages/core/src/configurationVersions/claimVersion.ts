import type { WorkerActor } from '../domain/actors.js';
import { isDomainError, UnavailableError } from '../domain/errors.js';
import type { Job } from '../domain/records.js';
import type { VcsConnection } from '../domain/vcs.js';
import type { JobHook } from '../jobs/hooks.js';
import type { JobLifecycle } from '../jobs/JobLifecycle.js';
import { ownerScope } from '../ports/UnitOfWork.js';
import { isoNow } from '../usecases/CoreDeps.js';
import { secretsWithheld } from '../vcs/forkPullRequests.js';
import type { ConfigurationVersionUseCases } from './ConfigurationVersionUseCases.js';
import { type ConfigurationVersionRef, configurationVersionRef } from './records.js';

/**
 * How long a claim waits for its job's configuration version when it is not made yet: under the
 * agent's 30 s request timeout, so the agent always hears of the job it was given (or of none).
 */
export const CLAIM_VERSION_WAIT_MS = 20_000;

/** Whether a job runs a connected vine's commit through a configuration version: its git source, secrets not withheld. */
export function runsConfigurationVersion(job: Job): boolean {
  return job.vine_id !== null && job.config_snapshot.source?.type === 'git' && !secretsWithheld(job);
}

/**
 * The configuration version reference of a claimed job of a connected vine: made at queue time
 * (`configurationVersionHooks`), else fetched now, waited for at most `CLAIM_VERSION_WAIT_MS`. A
 * version that cannot be had ends the job at once (`needs_reconnect`, or `source_unavailable`
 * with the provider's reason, written to its log too) and answers null: the agent never runs it.
 */
export async function claimConfigurationVersion(
  versions: ConfigurationVersionUseCases,
  lifecycle: JobLifecycle,
  deps: Parameters<typeof isoNow>[0],
  worker: WorkerActor,
  job: Job,
  connection: VcsConnection,
): Promise<ConfigurationVersionRef | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new UnavailableError(
            'provider_unavailable',
            `the archive was not fetched within ${CLAIM_VERSION_WAIT_MS / 1000} s (the fetch goes on; run the job again once it is done)`,
          ),
        ),
      CLAIM_VERSION_WAIT_MS,
    );
  });
  try {
    const version = await Promise.race([versions.forJob(job, connection), late]);
    return configurationVersionRef(version, job.id);
  } catch (error) {
    const reconnect = isDomainError(error) && error.code === 'needs_reconnect';
    const reason = error instanceof Error ? error.message : String(error);
    const source = job.config_snapshot.source;
    const commit = source?.type === 'git' ? (source.commit ?? source.ref ?? connection.branch) : connection.branch;
    const message = reconnect
      ? `needs_reconnect: ${reason}`
      : `the control plane could not fetch ${connection.repository} at ${commit}: ${reason}`;
    try {
      await lifecycle.run(ownerScope(worker.ownerId), async (stores) => {
        const current = await stores.jobs.get(worker.ownerId, job.id);
        if (current?.status !== 'PROCESSING') return null;
        await stores.logs.append(job.owner_id, job.id, `trellis: ${message}\n`, 'SYSTEM', isoNow(deps));
        return lifecycle.end(stores, current, 'start_failed', {
          reason: reconnect ? 'needs_reconnect' : 'source_unavailable',
          actor: 'system',
          message,
        });
      });
    } catch {
      // The lost-agent sweep and a person's cancel remain.
    }
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A git-driven job's configuration version is made as the job is queued (a push, a pull request,
 * a run trigger, a plan of a connected vine), once the queue commits and without holding it, so
 * the claim usually finds it made.
 */
export function configurationVersionHooks(versions: ConfigurationVersionUseCases | undefined): JobHook[] {
  if (!versions) return [];
  return [
    {
      name: 'configurationVersions.prefetch',
      on: ['queued'],
      async run(job, _change, { stores, afterCommit }) {
        if (!runsConfigurationVersion(job) || job.vine_id === null) return;
        const connection = await stores.vcs.get(job.owner_id, job.vine_id);
        if (connection) afterCommit(() => versions.prefetch(job, connection));
      },
    },
  ];
}
