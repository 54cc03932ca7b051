import { ConfigurationVersionUseCases } from '../configurationVersions/ConfigurationVersionUseCases.js';
import { WorkerCredentialCache } from '../auth/WorkerCredentialCache.js';
import { HeartbeatBuffer } from './HeartbeatBuffer.js';
import { ApiTokenUseCases } from '../tokens/ApiTokenUseCases.js';
import { AuditUseCases } from '../audit/AuditUseCases.js';
import { AuthUseCases } from './AuthUseCases.js';
import { VineUseCases } from './VineUseCases.js';
import type { CoreDeps } from './CoreDeps.js';
import { DriftUseCases } from '../drift/DriftUseCases.js';
import { GitEventUseCases } from '../vcs/GitEventUseCases.js';
import { InvitationUseCases } from '../orgs/InvitationUseCases.js';
import { JobUseCases } from './JobUseCases.js';
import { JobWaitingUseCases } from './JobWaitingUseCases.js';
import { LogUseCases } from './LogUseCases.js';
import { NotificationUseCases } from './NotificationUseCases.js';
import { VcsFeedbackUseCases } from './vcsFeedback.js';
import { OrgUseCases } from '../orgs/OrgUseCases.js';
import { PolicyUseCases } from '../policies/PolicyUseCases.js';
import { PlanArtifactUseCases } from './PlanArtifactUseCases.js';
import { PlanReviewUseCases } from '../policies/PlanReviewUseCases.js';
import { ReleaseUseCases } from './ReleaseUseCases.js';
import { RepositoryUseCases } from '../vcs/RepositoryUseCases.js';
import { SignInLinkUseCases } from './SignInLinkUseCases.js';
import { SignInUseCases } from './SignInUseCases.js';
import { StateUseCases } from './StateUseCases.js';
import { VcsUseCases } from '../vcs/VcsUseCases.js';
import { VineyardUseCases } from './VineyardUseCases.js';
import { WorkerUseCases } from './WorkerUseCases.js';
import { WorkloadIdentityUseCases } from '../workloadIdentity/WorkloadIdentityUseCases.js';
import { createJobLifecycle } from '../jobs/jobHooks.js';
import { createTfeUseCases, type TfeUseCases } from '../tfe/index.js';
import { VineEditUseCases } from '../vineEdits/VineEditUseCases.js';

/** Every use case over one set of ports: what the HTTP layer calls. */
export interface UseCases {
  auth: AuthUseCases;
  vineyards: VineyardUseCases;
  vines: VineUseCases;
  /** Changing and deleting vines and vineyards (issue 25). */
  vineEdits: VineEditUseCases;
  jobs: JobUseCases;
  /** One job with why it waits (issue 25). */
  jobWaiting: JobWaitingUseCases;
  logs: LogUseCases;
  workers: WorkerUseCases;
  planArtifacts: PlanArtifactUseCases;
  releases: ReleaseUseCases;
  states: StateUseCases;
  signIn: SignInUseCases;
  signInLinks: SignInLinkUseCases;
  repositories: RepositoryUseCases;
  apiTokens: ApiTokenUseCases;
  orgs: OrgUseCases;
  invitations: InvitationUseCases;
  drift: DriftUseCases;
  notifications: NotificationUseCases;
  vcsFeedback: VcsFeedbackUseCases;
  policies: PolicyUseCases;
  vcs: VcsUseCases;
  audit: AuditUseCases;
  planReviews: PlanReviewUseCases;
  workloadIdentity: WorkloadIdentityUseCases;
  gitEvents: GitEventUseCases;
  /** The Terraform Cloud protocol (issue 26). */
  tfe: TfeUseCases;
  /** Configuration versions: the tarballs agents run (issue 23). */
  configurationVersions: ConfigurationVersionUseCases;
}

export function createUseCases(deps: CoreDeps): UseCases {
  const credentials = new WorkerCredentialCache(deps.clock, deps.settings.workerCredentialCacheSeconds, deps.events);
  const heartbeats = new HeartbeatBuffer(deps);
  const workloadIdentity = new WorkloadIdentityUseCases(deps);
  // The one owner of the job lifecycle, shared by every use case that queues or ends a job.
  const configurationVersions = new ConfigurationVersionUseCases(deps);
  const lifecycle = createJobLifecycle(deps, { credentials, configurationVersions });
  const apiTokens = new ApiTokenUseCases(deps);
  const drift = new DriftUseCases(deps, lifecycle);
  return {
    auth: new AuthUseCases(deps),
    vineyards: new VineyardUseCases(deps),
    vines: new VineUseCases(deps),
    vineEdits: new VineEditUseCases(deps, drift),
    jobs: new JobUseCases(deps, lifecycle, heartbeats, workloadIdentity, configurationVersions),
    configurationVersions,
    jobWaiting: new JobWaitingUseCases(deps),
    logs: new LogUseCases(deps),
    workers: new WorkerUseCases(deps, credentials, heartbeats, lifecycle),
    planArtifacts: new PlanArtifactUseCases(deps),
    releases: new ReleaseUseCases(deps),
    states: new StateUseCases(deps),
    signIn: new SignInUseCases(deps),
    signInLinks: new SignInLinkUseCases(deps),
    repositories: new RepositoryUseCases(deps),
    apiTokens,
    orgs: new OrgUseCases(deps),
    invitations: new InvitationUseCases(deps),
    drift,
    notifications: new NotificationUseCases(deps),
    vcsFeedback: new VcsFeedbackUseCases(deps),
    policies: new PolicyUseCases(deps),
    vcs: new VcsUseCases(deps),
    audit: new AuditUseCases(deps),
    planReviews: new PlanReviewUseCases(deps, lifecycle),
    workloadIdentity,
    gitEvents: new GitEventUseCases(deps, lifecycle),
    tfe: createTfeUseCases(deps, apiTokens),
  };
}
