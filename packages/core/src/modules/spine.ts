import { WorkerCredentialCache } from '../auth/WorkerCredentialCache.js';
import { ConfigurationVersionUseCases } from '../configurationVersions/ConfigurationVersionUseCases.js';
import { configurationVersionHooks } from '../configurationVersions/claimVersion.js';
import { driftServices } from '../drift/module.js';
import { JobLifecycle } from '../jobs/JobLifecycle.js';
import { liveAnnouncementHooks } from '../jobs/liveAnnouncements.js';
import { createTfeUseCases, type TfeUseCases } from '../tfe/index.js';
import { tfeRunHooks } from '../tfe/runs/runApply.js';
import { policyServices } from '../policies/module.js';
import { tokenServices } from '../tokens/module.js';
import { coreServices, serviceRef } from '../tokens.js';
import { AuthUseCases } from '../usecases/AuthUseCases.js';
import { deploymentHooks } from '../usecases/finalizeDeployment.js';
import { HeartbeatBuffer } from '../usecases/HeartbeatBuffer.js';
import { JobUseCases } from '../usecases/JobUseCases.js';
import { JobWaitingUseCases } from '../usecases/JobWaitingUseCases.js';
import { QueueUseCases } from '../queue/QueueUseCases.js';
import { LogUseCases } from '../usecases/LogUseCases.js';
import { PlanArtifactUseCases } from '../usecases/PlanArtifactUseCases.js';
import { ReleaseUseCases } from '../usecases/ReleaseUseCases.js';
import { SignInLinkUseCases } from '../usecases/SignInLinkUseCases.js';
import { SignInUseCases } from '../usecases/SignInUseCases.js';
import { StateUseCases } from '../usecases/StateUseCases.js';
import { VineUseCases } from '../usecases/VineUseCases.js';
import { VineyardUseCases } from '../usecases/VineyardUseCases.js';
import { WorkerUseCases } from '../usecases/WorkerUseCases.js';
import { workerHooks } from '../usecases/workerDestruction.js';
import { VineEditUseCases } from '../vineEdits/VineEditUseCases.js';
import { workloadIdentityServices } from '../workloadIdentity/module.js';
import { type CoreModule, service, useCase } from './CoreModule.js';

/** The spine's use cases: sign-in, vineyards and vines, jobs, workers, logs, state, releases. */
export const spineServices = {
  auth: serviceRef<AuthUseCases>('trellis.core.auth'),
  signIn: serviceRef<SignInUseCases>('trellis.core.sign-in'),
  signInLinks: serviceRef<SignInLinkUseCases>('trellis.core.sign-in-links'),
  vineyards: serviceRef<VineyardUseCases>('trellis.core.vineyards'),
  vines: serviceRef<VineUseCases>('trellis.core.vines'),
  vineEdits: serviceRef<VineEditUseCases>('trellis.core.vine-edits'),
  jobs: serviceRef<JobUseCases>('trellis.core.jobs'),
  jobWaiting: serviceRef<JobWaitingUseCases>('trellis.core.job-waiting'),
  queue: serviceRef<QueueUseCases>('trellis.core.queue'),
  logs: serviceRef<LogUseCases>('trellis.core.logs'),
  workers: serviceRef<WorkerUseCases>('trellis.core.workers'),
  planArtifacts: serviceRef<PlanArtifactUseCases>('trellis.core.plan-artifacts'),
  releases: serviceRef<ReleaseUseCases>('trellis.core.releases'),
  states: serviceRef<StateUseCases>('trellis.core.states'),
  configurationVersions: serviceRef<ConfigurationVersionUseCases>('trellis.core.configuration-versions'),
  tfe: serviceRef<TfeUseCases>('trellis.core.tfe'),
} as const;

/**
 * The spine every feature builds on, first in the list: the job lifecycle (its hooks come from
 * every module, `coreServices.jobHooks`) and the use cases around jobs. Its hooks complete a
 * change (a deployment's components), follow it (a destroyed worker, a configuration version
 * fetched) and announce it last.
 */
export const coreModule: CoreModule = {
  name: 'core',
  useCases: [
    service(coreServices.workerCredentials, (get) => {
      const deps = get(coreServices.deps);
      return new WorkerCredentialCache(deps.clock, deps.settings.workerCredentialCacheSeconds, deps.events);
    }),
    service(coreServices.heartbeats, (get) => new HeartbeatBuffer(get(coreServices.deps))),
    service(coreServices.jobLifecycle, (get) => new JobLifecycle(get(coreServices.deps), get(coreServices.jobHooks))),
    useCase('auth', spineServices.auth, (get) => new AuthUseCases(get(coreServices.deps))),
    useCase('vineyards', spineServices.vineyards, (get) => new VineyardUseCases(get(coreServices.deps))),
    useCase('vines', spineServices.vines, (get) => new VineUseCases(get(coreServices.deps))),
    useCase(
      'vineEdits',
      spineServices.vineEdits,
      (get) => new VineEditUseCases(get(coreServices.deps), get(driftServices.drift)),
    ),
    useCase(
      'jobs',
      spineServices.jobs,
      (get) =>
        new JobUseCases(
          get(coreServices.deps),
          get(coreServices.jobLifecycle),
          get(coreServices.heartbeats),
          get(workloadIdentityServices.workloadIdentity),
          get(spineServices.configurationVersions),
        ),
    ),
    useCase(
      'configurationVersions',
      spineServices.configurationVersions,
      (get) => new ConfigurationVersionUseCases(get(coreServices.deps)),
    ),
    useCase('jobWaiting', spineServices.jobWaiting, (get) => new JobWaitingUseCases(get(coreServices.deps))),
    useCase('queue', spineServices.queue, (get) => new QueueUseCases(get(coreServices.deps))),
    useCase('logs', spineServices.logs, (get) => new LogUseCases(get(coreServices.deps))),
    useCase(
      'workers',
      spineServices.workers,
      (get) =>
        new WorkerUseCases(
          get(coreServices.deps),
          get(coreServices.workerCredentials),
          get(coreServices.heartbeats),
          get(coreServices.jobLifecycle),
        ),
    ),
    useCase('planArtifacts', spineServices.planArtifacts, (get) => new PlanArtifactUseCases(get(coreServices.deps))),
    useCase('releases', spineServices.releases, (get) => new ReleaseUseCases(get(coreServices.deps))),
    useCase('states', spineServices.states, (get) => new StateUseCases(get(coreServices.deps))),
    useCase('signIn', spineServices.signIn, (get) => new SignInUseCases(get(coreServices.deps))),
    useCase('signInLinks', spineServices.signInLinks, (get) => new SignInLinkUseCases(get(coreServices.deps))),
    useCase('tfe', spineServices.tfe, (get) =>
      createTfeUseCases(
        get(coreServices.deps),
        get(tokenServices.apiTokens),
        get(coreServices.jobLifecycle),
        get(policyServices.planReviews),
        get(spineServices.configurationVersions),
        get(spineServices.vineEdits),
      ),
    ),
  ],
  hooks: ({ credentials, configurationVersions }) => ({
    complete: deploymentHooks,
    // A remote run's apply follows its plan (auto-apply, a yes given before an approval: issue 27).
    follow: [...workerHooks(credentials), ...configurationVersionHooks(configurationVersions), ...tfeRunHooks],
    announce: liveAnnouncementHooks,
  }),
};
