import type { AgentFeature } from '../domain/agentFeatures.js';
import type { WorkerActor } from '../domain/actors.js';
import type { Job } from '../domain/records.js';
import type { EndReason } from '../jobs/endReasons.js';
import type { JobLifecycle } from '../jobs/JobLifecycle.js';
import { ownerScope, type Stores } from '../ports/UnitOfWork.js';
import { isoNow } from '../usecases/CoreDeps.js';
import { type ConfigurationVersionRef, configurationVersionRef } from './records.js';

export { AGENT_FEATURES, type AgentFeature } from '../domain/agentFeatures.js';

/** The features `job` needs of its agent. */
export function featuresNeeded(job: Job): AgentFeature[] {
  const needed: AgentFeature[] = [];
  if (job.config_snapshot.source?.type === 'upload') needed.push('upload_source');
  const options = job.config_snapshot.run_options;
  if (job.job_type === 'PLAN' && options && Object.keys(options).length > 0) needed.push('run_options');
  return needed;
}

/** Why the agent cannot run `job` (a sentence), or null when it can. */
export function missingFeatures(job: Job, features: readonly string[]): string | null {
  const missing = featuresNeeded(job).filter((feature) => !features.includes(feature));
  if (missing.length === 0) return null;
  const what = missing.map((feature) =>
    feature === 'upload_source'
      ? 'an uploaded configuration (a run of the stock CLI)'
      : 'run options (-target, -replace, -refresh-only, -refresh=false)',
  );
  return `agent_outdated: this job needs ${what.join(' and ')}, which the agent that claimed it does not support; upgrade the agent and run the job again`;
}

/**
 * The configuration version of a claimed job whose source is an upload (issue 27), read in the
 * claim's unit of work: its reference when it is `uploaded` (only the claiming agent may download
 * it); otherwise why not, a sentence with which the caller ends the job.
 */
export async function uploadedVersionIn(
  stores: Stores,
  job: Job,
): Promise<{ ref: ConfigurationVersionRef } | { refused: string }> {
  const source = job.config_snapshot.source;
  if (source?.type !== 'upload') return { refused: 'the job runs no uploaded configuration' };
  const version = await stores.configurationVersions.get(job.owner_id, source.configuration_version_id);
  const name = `configuration version cv-${source.configuration_version_id}`;
  if (!version || version.vine_id !== job.vine_id) return { refused: `${name} does not exist (any more)` };
  if (version.status !== 'uploaded' || version.sha256 === null) {
    const why = version.status === 'errored' ? `: ${version.error_message ?? version.error_code}` : '';
    return { refused: `${name} is ${version.status}${why}; upload the configuration again` };
  }
  return { ref: configurationVersionRef(version, job.id) };
}

/** Ends a job the control plane could not start for its agent, with the reason in its log. */
export async function endAtClaim(
  lifecycle: JobLifecycle,
  deps: Parameters<typeof isoNow>[0],
  worker: WorkerActor,
  job: Job,
  reason: EndReason,
  message: string,
): Promise<void> {
  try {
    await lifecycle.run(ownerScope(worker.ownerId), async (stores) => {
      const current = await stores.jobs.get(worker.ownerId, job.id);
      if (current?.status !== 'PROCESSING') return null;
      await stores.logs.append(job.owner_id, job.id, `trellis: ${message}\n`, 'SYSTEM', isoNow(deps));
      return lifecycle.end(stores, current, 'start_failed', { reason, actor: 'system', message });
    });
  } catch {
    // The lost-agent sweep and a person's cancel remain.
  }
}
