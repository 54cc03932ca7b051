import type {
  ConfigurationVersion,
  PlanChangesRecord,
  MirrorArchive,
  ModuleRepository,
  RegistryGpgKey,
  RegistryModule,
  RegistryModuleVersion,
  RegistryProvider,
  RegistryProviderPlatform,
  RegistryProviderVersion,
  TfeRun,
} from '@trellis/core';
import { compareNewestFirst, type Page, type PageKey, type PageRequest, takePage } from '@trellis/core';
import type {
  ApiToken,
  AuditEntry,
  CliLogin,
  CloudIdentity,
  Identity,
  Job,
  JobOffer,
  LogChunk,
  Notification,
  OutboxEntry,
  OutboxItems,
  OutboxKind,
  Org,
  OrgMember,
  PlanArtifact,
  Policy,
  PolicyVersion,
  RefreshTokenRecord,
  SignInLink,
  SigningKey,
  TfeLoginCode,
  StateLock,
  StateVersion,
  User,
  PlanPolicyResult,
  Vine,
  VineComponents,
  Vineyard,
  Worker,
  WorkerRelease,
  VcsConnection,
  VcsCommentRef,
} from '@trellis/core';

/** A log chunk as stored: the public record plus the owner that row-level security filters on. */
export interface StoredLogChunk {
  owner_id: string;
  /** The agent's sequence number (null or absent: posted without one). */
  seq?: number | null;
  chunk: LogChunk;
}

/** Component rows of one vine, with the owner that row-level security filters on. */
export interface StoredComponents {
  owner_id: string;
  components: VineComponents;
  updated_at: string;
}

/**
 * Every table of the in-memory database. Maps keep insertion order, which stands in for the
 * order rows were created when two rows share a timestamp (a fake clock often does not move).
 */
export interface MemoryState {
  users: Map<string, User>;
  /** Keyed by `provider:provider_user_id`. */
  identities: Map<string, Identity>;
  cliLogins: Map<string, CliLogin>;
  refreshTokens: Map<string, RefreshTokenRecord>;
  vineyards: Map<string, Vineyard>;
  vines: Map<string, Vine>;
  /** Keyed by vine id: the policy result of its latest plan (issue 29), absent: `none`. */
  planPolicies: Map<string, PlanPolicyResult>;
  /** Deleted vines and vineyards (issue 25), out of every read; a vine's state waits for `purge_after`. */
  deletedVines: Map<string, { vine: Vine; purge_after: string | null }>;
  deletedVineyards: Map<string, Vineyard>;
  /** Keyed by vine id. */
  components: Map<string, StoredComponents>;
  cloudIdentities: Map<string, CloudIdentity>;
  jobs: Map<string, Job>;
  /** Keyed by job id: a queued job held for one agent a moment (`JobOffer`; SQL keeps it on the job). */
  jobOffers: Map<string, JobOffer>;
  logs: StoredLogChunk[];
  /** Keyed by job id: the bytes of the job's log and whether it was cut (SQL keeps them on the job). */
  logUsage: Map<string, { bytes: number; cut: boolean }>;
  workers: Map<string, Worker>;
  releases: Map<string, WorkerRelease>;
  /** Keyed by job id. */
  planArtifacts: Map<string, PlanArtifact>;
  /** Keyed by job id: the change document of a recorded plan (SQL keeps it on the plan's row). */
  planChanges: Map<string, PlanChangesRecord>;
  /** Keyed by id (issue 23). */
  configurationVersions: Map<string, ConfigurationVersion>;
  /** Keyed by plan job id (issue 27); a run whose job is gone is gone too. */
  tfeRuns: Map<string, TfeRun>;
  /** The provider mirror's archives (issue 28), keyed by id, in pushed order. */
  mirrorArchives: Map<string, MirrorArchive>;
  /** The registry's providers, versions, platforms and GPG keys (issue 28), keyed by id. */
  registryProviders: Map<string, RegistryProvider>;
  registryProviderVersions: Map<string, RegistryProviderVersion>;
  registryProviderPlatforms: Map<string, RegistryProviderPlatform>;
  registryGpgKeys: Map<string, RegistryGpgKey>;
  stateVersions: StateVersion[];
  /** Keyed by vine id. */
  stateLocks: Map<string, StateLock>;
  apiTokens: Map<string, ApiToken>;
  /** An organization's owner is itself. */
  orgs: Map<string, Org>;
  /** Keyed by membership id; a membership's owner is its organization. */
  orgMembers: Map<string, OrgMember>;
  notifications: Map<string, Notification>;
  /** The outbox (every kind), in written order. */
  outbox: Map<string, OutboxEntry>;
  /** Keyed by entry id, in append order. */
  audit: Map<string, AuditEntry>;
  policies: Map<string, Policy>;
  /** Keyed by `<policy id>:<version>`. */
  policyVersions: Map<string, PolicyVersion>;
  /** Keyed by vine id. */
  vcsConnections: Map<string, VcsConnection>;
  /** `<provider>:<delivery id>` → when it was received. */
  vcsDeliveries: Map<string, string>;
  /** Modules published from git tags (issue 28), keyed by id. */
  moduleRepositories: Map<string, ModuleRepository>;
  /** System records (issue 16), keyed by kid. */
  signingKeys: Map<string, SigningKey>;
  tfeLoginCodes: Map<string, TfeLoginCode>;
  /** System records, keyed by token hash. */
  signInLinks: Map<string, SignInLink>;
  /** Keyed by item id, in written order. */
  /** Keyed by `<vine>:<provider>:<repository>#<number>`. */
  vcsComments: Map<string, VcsCommentRef>;
  /** Registry modules and their versions (issue 28), keyed by id. */
  registryModules: Map<string, RegistryModule>;
  registryModuleVersions: Map<string, RegistryModuleVersion>;
}

export function emptyMemoryState(): MemoryState {
  return {
    users: new Map(),
    identities: new Map(),
    cliLogins: new Map(),
    refreshTokens: new Map(),
    vineyards: new Map(),
    vines: new Map(),
    planPolicies: new Map(),
    deletedVines: new Map(),
    deletedVineyards: new Map(),
    components: new Map(),
    cloudIdentities: new Map(),
    jobs: new Map(),
    jobOffers: new Map(),
    logs: [],
    logUsage: new Map(),
    workers: new Map(),
    releases: new Map(),
    planArtifacts: new Map(),
    planChanges: new Map(),
    configurationVersions: new Map(),
    tfeRuns: new Map(),
    mirrorArchives: new Map(),
    registryProviders: new Map(),
    registryProviderVersions: new Map(),
    registryProviderPlatforms: new Map(),
    registryGpgKeys: new Map(),
    stateVersions: [],
    stateLocks: new Map(),
    apiTokens: new Map(),
    orgs: new Map(),
    orgMembers: new Map(),
    notifications: new Map(),
    outbox: new Map(),
    audit: new Map(),
    policies: new Map(),
    policyVersions: new Map(),
    registryModules: new Map(),
    registryModuleVersions: new Map(),
    vcsConnections: new Map(),
    vcsDeliveries: new Map(),
    moduleRepositories: new Map(),
    signingKeys: new Map(),
    tfeLoginCodes: new Map(),
    signInLinks: new Map(),
    vcsComments: new Map(),
  };
}

/** Rows go in and come out as copies, so no caller ever holds a live reference into the store. */
/** The outbox rows of one kind, in written order (`snapshot()` of a memory unit of work). */
export function outboxRows<K extends OutboxKind>(state: Pick<MemoryState, 'outbox'>, kind: K): OutboxItems[K][] {
  return [...state.outbox.values()].flatMap((entry) => (entry.kind === kind ? [entry.item as OutboxItems[K]] : []));
}

export function copy<T>(value: T): T {
  return structuredClone(value);
}

/** Oldest first by `key`; rows with the same time keep their insertion order. */
export function oldestFirst<T>(rows: Iterable<T>, key: (row: T) => string): T[] {
  return [...rows].sort((a, b) => compare(key(a), key(b)));
}

/** Newest first by `key`; rows with the same time come latest-inserted first. */
export function newestFirst<T>(rows: Iterable<T>, key: (row: T) => string): T[] {
  return [...rows].reverse().sort((a, b) => compare(key(b), key(a)));
}

function compare(a: string, b: string): number {
  const left = Date.parse(a);
  const right = Date.parse(b);
  if (!Number.isNaN(left) && !Number.isNaN(right) && left !== right) return left - right;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * One oldest-first page of a table: by `at`, then by insertion order. The page key orders the same
 * way in reverse, so `after` is the last key of the previous page and the next page holds what
 * sorts strictly after it.
 */
export function pageOldestFirst<T>(
  table: Map<string, T>,
  include: (row: T) => boolean,
  at: (row: T) => string,
  request: PageRequest,
): Page<T> {
  const keyed: { row: T; key: PageKey }[] = [];
  let seq = 0;
  for (const row of table.values()) {
    seq += 1;
    if (include(row)) keyed.push({ row, key: { at: at(row), seq } });
  }
  keyed.sort((a, b) => compareNewestFirst(b.key, a.key));
  const after = request.after;
  const rest = after === undefined ? keyed : keyed.filter((entry) => compareNewestFirst(after, entry.key) > 0);
  const items = rest.slice(0, request.limit);
  const last = items[items.length - 1];
  return {
    items: items.map((entry) => copy(entry.row)),
    next: rest.length > request.limit && last !== undefined ? last.key : null,
  };
}

/**
 * One newest-first page of a table, as the SQL stores page (issue 10 §2): by `at`, then by
 * insertion order (a Map keeps it), which stands in for the SQL `seq`.
 */
export function pageNewestFirst<T>(
  table: Map<string, T>,
  include: (row: T) => boolean,
  at: (row: T) => string,
  request: PageRequest,
): Page<T> {
  const keyed: { row: T; key: PageKey }[] = [];
  let seq = 0;
  for (const row of table.values()) {
    seq += 1;
    if (include(row)) keyed.push({ row, key: { at: at(row), seq } });
  }
  keyed.sort((a, b) => compareNewestFirst(a.key, b.key));
  const page = takePage(keyed, (entry) => entry.key, request);
  return { items: page.items.map((entry) => copy(entry.row)), next: page.next };
}
