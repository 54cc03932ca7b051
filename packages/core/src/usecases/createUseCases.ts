import type { JobRegistryAccess } from '../registry/jobRegistry.js';
import type { MirrorUseCases } from '../registry/mirror/MirrorUseCases.js';
import type { CoreModule } from '../modules/CoreModule.js';
import { CORE_MODULES } from '../modules/coreModules.js';
import { resolveModules } from '../modules/registry.js';
import { coreServices } from '../tokens.js';
import type { ConfigurationVersionUseCases } from '../configurationVersions/ConfigurationVersionUseCases.js';
import type { ApiTokenUseCases } from '../tokens/ApiTokenUseCases.js';
import type { AuditUseCases } from '../audit/AuditUseCases.js';
import type { AuthUseCases } from './AuthUseCases.js';
import type { VineUseCases } from './VineUseCases.js';
import type { CoreDeps } from './CoreDeps.js';
import type { DriftUseCases } from '../drift/DriftUseCases.js';
import type { GitEventUseCases } from '../vcs/GitEventUseCases.js';
import type { InvitationUseCases } from '../orgs/InvitationUseCases.js';
import type { JobUseCases } from './JobUseCases.js';
import type { JobWaitingUseCases } from './JobWaitingUseCases.js';
import type { QueueUseCases } from '../queue/QueueUseCases.js';
import type { LogUseCases } from './LogUseCases.js';
import type { NotificationUseCases } from './NotificationUseCases.js';
import type { VcsFeedbackUseCases } from './vcsFeedback.js';
import type { OutboxUseCases } from '../outbox/OutboxUseCases.js';
import type { OrgUseCases } from '../orgs/OrgUseCases.js';
import type { PolicyUseCases } from '../policies/PolicyUseCases.js';
import type { PlanArtifactUseCases } from './PlanArtifactUseCases.js';
import type { PlanReviewUseCases } from '../policies/PlanReviewUseCases.js';
import type { ReleaseUseCases } from './ReleaseUseCases.js';
import type { RepositoryUseCases } from '../vcs/RepositoryUseCases.js';
import type { SignInLinkUseCases } from './SignInLinkUseCases.js';
import type { SignInUseCases } from './SignInUseCases.js';
import type { StateUseCases } from './StateUseCases.js';
import type { VcsUseCases } from '../vcs/VcsUseCases.js';
import type { VineyardUseCases } from './VineyardUseCases.js';
import type { WorkerUseCases } from './WorkerUseCases.js';
import type { WorkloadIdentityUseCases } from '../workloadIdentity/WorkloadIdentityUseCases.js';
import type { TfeUseCases } from '../tfe/index.js';
import type { RegistryModuleUseCases } from '../registry/modules/RegistryModuleUseCases.js';
import type { ModuleRepositoryUseCases } from '../registry/gitTags/ModuleRepositoryUseCases.js';
import type { ModuleTagUseCases } from '../registry/gitTags/ModuleTagUseCases.js';
import type { ModuleDocsUseCases } from '../registry/moduleFiles/ModuleDocsUseCases.js';
import type { ModuleUsageUseCases } from '../registry/modules/ModuleUsageUseCases.js';
import type { VineEditUseCases } from '../vineEdits/VineEditUseCases.js';
import type { GpgKeyUseCases } from '../registry/providers/GpgKeyUseCases.js';
import type { RegistryProviderUseCases } from '../registry/providers/RegistryProviderUseCases.js';

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
  /** The queued jobs in the order agents claim them, with their agent pools (issue 29). */
  queue: QueueUseCases;
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
  /** Deliveries of notifications and git feedback, one outbox (issue 24). */
  outbox: OutboxUseCases;
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
  /** The provider network mirror (issue 28). */
  mirror: MirrorUseCases;
  /** Jobs' registry credentials (issue 28). */
  jobRegistry: JobRegistryAccess;
  /** The module registry (issue 28). */
  registryModules: RegistryModuleUseCases;
  /** The private registry's providers (issue 28). */
  registryProviders: RegistryProviderUseCases;
  /** The namespaces' GPG keys the providers are signed with (issue 28). */
  gpgKeys: GpgKeyUseCases;
  /** Modules published from git tags: their repositories (issue 28). */
  moduleRepositories: ModuleRepositoryUseCases;
  /** …and the tag pushes that publish them. */
  moduleTags: ModuleTagUseCases;
  /** A published version's README, inputs and outputs (the registry page). */
  moduleDocs: ModuleDocsUseCases;
  /** Which vines use which version of a module, from their last plans (the registry page). */
  moduleUsage: ModuleUsageUseCases;
}

/**
 * Every use case over one set of ports: what the HTTP layer calls. Each comes from its module
 * (`modules/coreModules.ts`), made once, in a plain registry; `trellis-server` fills tsyringe
 * from the same modules instead, so an embedder can replace any of them by its token.
 */
export function createUseCases(deps: CoreDeps, modules: readonly CoreModule[] = CORE_MODULES): UseCases {
  return resolveModules(deps, modules)(coreServices.useCases);
}
