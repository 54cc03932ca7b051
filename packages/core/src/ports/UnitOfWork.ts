import type { ConfigurationVersionStore } from '../configurationVersions/ports.js';
import type { MirrorStore } from '../registry/mirror/ports.js';
import type { RegistryModuleStore } from '../registry/modules/ports.js';
import type { TfeRunStore } from '../tfe/runs/records.js';
import type { RegistryProviderStore } from '../registry/providers/ports.js';
import type { ModuleRepositoryStore } from '../registry/gitTags/records.js';
import type { ApiTokenStore } from './ApiTokenStore.js';
import type { AuditStore } from './AuditStore.js';
import type { CliLoginStore } from './CliLoginStore.js';
import type { CloudIdentityStore } from './CloudIdentityStore.js';
import type { IdentityStore } from './IdentityStore.js';
import type { JobStore } from './JobStore.js';
import type { LogStore } from './LogStore.js';
import type { NotificationStore } from './NotificationStore.js';
import type { OrgStore } from './OrgStore.js';
import type { OutboxStore } from './OutboxStore.js';
import type { PolicyStore } from './PolicyStore.js';
import type { PlanArtifactStore } from './PlanArtifactStore.js';
import type { RefreshTokenStore } from './RefreshTokenStore.js';
import type { ReleaseStore } from './ReleaseStore.js';
import type { SignInLinkStore } from './SignInLinkStore.js';
import type { SigningKeyStore } from './SigningKeyStore.js';
import type { StateStore } from './StateStore.js';
import type { TfeLoginCodeStore } from './TfeLoginCodeStore.js';
import type { UserStore } from './UserStore.js';
import type { VcsConnectionStore } from './VcsConnectionStore.js';
import type { VcsFeedbackStore } from './VcsFeedbackStore.js';
import type { VineStore } from './VineStore.js';
import type { VineyardStore } from './VineyardStore.js';
import type { WorkerStore } from './WorkerStore.js';

/** Every store, bound to one transaction. */
export interface Stores {
  users: UserStore;
  identities: IdentityStore;
  cliLogins: CliLoginStore;
  refreshTokens: RefreshTokenStore;
  vineyards: VineyardStore;
  vines: VineStore;
  cloudIdentities: CloudIdentityStore;
  jobs: JobStore;
  logs: LogStore;
  workers: WorkerStore;
  releases: ReleaseStore;
  planArtifacts: PlanArtifactStore;
  configurationVersions: ConfigurationVersionStore;
  /** Remote runs of the stock CLI (issue 27), keyed by their plan job. */
  tfeRuns: TfeRunStore;
  states: StateStore;
  apiTokens: ApiTokenStore;
  orgs: OrgStore;
  notifications: NotificationStore;
  policies: PolicyStore;
  vcs: VcsConnectionStore;
  /** Modules published from git tags (issue 28). */
  moduleRepositories: ModuleRepositoryStore;
  /** The comment ids of pull requests; the feedback itself is in `outbox`. */
  vcsFeedback: VcsFeedbackStore;
  /** Notification deliveries and git provider feedback, one table (`domain/outbox.ts`). */
  outbox: OutboxStore;
  audit: AuditStore;
  /** Modules of the private registry and their versions (issue 28). */
  registryModules: RegistryModuleStore;
  /** System work only (issue 16). */
  signingKeys: SigningKeyStore;
  /** System work only (issue 26). */
  tfeLoginCodes: TfeLoginCodeStore;
  /** System work only: one-time sign-in links (`trellis-server users invite`). */
  signInLinks: SignInLinkStore;
  /** The provider network mirror's archives (issue 28). */
  mirror: MirrorStore;
  /** The registry's providers and the namespaces' GPG keys (issue 28). */
  registryProviders: RegistryProviderStore;
}

/**
 * Whose data a unit of work may touch (on Postgres by row-level security as well as by the
 * stores' own filters).
 * - `owner` work is isolated to one owner: a user or an organization. `actorId` is the user
 *   acting on an organization's records (core has checked the role); on Postgres the database
 *   also requires that user to be a member. Absent, the owner acts itself (a person on their own
 *   records, an organization's agent on the organization's).
 * - `member` work reads across a person's own records and those of the organizations they
 *   belong to (`orgIds`, as core read them): lists, and finding whose a record is.
 * - `system` work is for the few things that precede or span owners: authenticating an agent or
 *   a device code, the lost-agent sweep, releases.
 */
export type Scope =
  | { kind: 'owner'; ownerId: string; actorId?: string }
  | { kind: 'member'; userId: string; orgIds: readonly string[] }
  | { kind: 'system' };

export const systemScope: Scope = { kind: 'system' };
export function ownerScope(ownerId: string, actorId?: string): Scope {
  return actorId === undefined || actorId === ownerId
    ? { kind: 'owner', ownerId }
    : { kind: 'owner', ownerId, actorId };
}
export function memberScope(userId: string, orgIds: readonly string[]): Scope {
  return { kind: 'member', userId, orgIds };
}
/** One owner, or several (a member's lists span their own records and their organizations'). */
export type OwnerIds = string | readonly string[];
export function ownerList(owners: OwnerIds): readonly string[] {
  return typeof owners === 'string' ? [owners] : owners;
}

/** The owners whose rows a scope may see: null for system work. */
export function visibleOwners(scope: Scope): readonly string[] | null {
  switch (scope.kind) {
    case 'owner':
      return [scope.ownerId];
    case 'member':
      return [scope.userId, ...scope.orgIds];
    case 'system':
      return null;
  }
}

/**
 * Runs `work` in one transaction: everything it writes commits together or not at all. A store
 * outage surfaces as `UnavailableError`.
 */
export interface UnitOfWork {
  run<T>(scope: Scope, work: (stores: Stores) => Promise<T>): Promise<T>;
  /**
   * Runs `work`, which only reads, in one read-only transaction. It takes no write lock (on
   * SQLite a deferred transaction, so it neither waits for nor holds up writers), which makes it
   * the cheap path for lookups on every request such as authenticating an agent. A write in it
   * fails.
   */
  read<T>(scope: Scope, work: (stores: Stores) => Promise<T>): Promise<T>;
  /** Throws `UnavailableError` when the database cannot be reached (for `/readyz`). */
  check(): Promise<void>;
}
