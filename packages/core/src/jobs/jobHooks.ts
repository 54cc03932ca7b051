import { configurationVersionHooks } from '../configurationVersions/claimVersion.js';
import type { ConfigurationVersionUseCases } from '../configurationVersions/ConfigurationVersionUseCases.js';
import type { WorkerCredentialCache } from '../auth/WorkerCredentialCache.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import { driftHooks, runTriggerHooks } from '../drift/driftHooks.js';
import { deploymentHooks } from '../usecases/finalizeDeployment.js';
import { autoDeployHooks } from '../vcs/gitJobs.js';
import { notificationHooks } from '../usecases/notificationOutbox.js';
import { planReviewHooks } from '../policies/PlanReviewUseCases.js';
import { vcsFeedbackHooks } from '../usecases/vcsFeedbackHooks.js';
import { workerHooks } from '../usecases/workerDestruction.js';
import type { JobHook } from './hooks.js';
import { JobLifecycle } from './JobLifecycle.js';
import { liveAnnouncementHooks } from './liveAnnouncements.js';

/** What some hooks need beyond the ports: this replica's caches. */
export interface JobHookServices {
  credentials?: WorkerCredentialCache;
  /** Makes git-driven jobs' configuration versions as they are queued (issue 23). */
  configurationVersions?: ConfigurationVersionUseCases;
}

/**
 * Every hook on the job lifecycle, in the order they run: first what completes the change itself
 * (the vine's components, a destroyed worker), then what reports it (notifications, approvals,
 * the git provider, drift results), then the work it queues (auto-deploy, run triggers), and
 * last the live announcements, which run after commit. Each feature keeps its hooks beside its
 * code; this list is the one place they are registered.
 */
export function jobHooks(services: JobHookServices = {}): readonly JobHook[] {
  return [
    ...deploymentHooks,
    ...notificationHooks,
    ...planReviewHooks,
    ...vcsFeedbackHooks,
    ...driftHooks,
    ...workerHooks(services.credentials),
    ...configurationVersionHooks(services.configurationVersions),
    ...autoDeployHooks,
    ...runTriggerHooks,
    ...liveAnnouncementHooks,
  ];
}

/** The lifecycle with every hook: what the use cases share (`createUseCases`). */
export function createJobLifecycle(deps: CoreDeps, services: JobHookServices = {}): JobLifecycle {
  return new JobLifecycle(deps, jobHooks(services));
}
