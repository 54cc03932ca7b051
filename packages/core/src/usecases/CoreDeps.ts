import type { TarballChecker } from '../configurationVersions/ports.js';
import type { PgpVerifier } from '../registry/providers/ports.js';
import type { ArtifactStore } from '../ports/ArtifactStore.js';
import type { Clock } from '../ports/Clock.js';
import type { EventBus, TrellisEvent } from '../ports/EventBus.js';
import type { JwsSigner } from '../ports/JwsSigner.js';
import type { SigningAlgorithm } from '../domain/records.js';
import type { IdentityProvider, GitProvider } from '../domain/enums.js';
import { DEFAULT_PAGE_LIMITS, type PageLimits } from '../domain/pagination.js';
import type { PolicyCompiler } from '../ports/PolicyCompiler.js';
import type { Random } from '../ports/Random.js';
import type { RateLimitStore } from '../ports/RateLimitStore.js';
import type { RepositoryLister } from '../ports/RepositoryLister.js';
import type { SecretBox } from '../ports/SecretBox.js';
import type { SignInProvider } from '../ports/SignInProvider.js';
import type { TokenSigner } from '../ports/TokenSigner.js';
import type { UnitOfWork } from '../ports/UnitOfWork.js';
import type { WebhookSender } from '../ports/WebhookSender.js';
import type { VcsApi, VcsWebhookReader } from '../ports/VcsApi.js';
import { DEFAULT_NOTIFICATION_SETTINGS, type NotificationSettings } from '../domain/notifications.js';
import { DEFAULT_OUTBOX_SETTINGS, type OutboxSettings } from '../domain/outbox.js';
import { DEFAULT_TFE_SETTINGS, type TfeSettings } from '../tfe/settings.js';
import { DEFAULT_MIRROR_SETTINGS, type MirrorSettings } from '../registry/mirror/records.js';
import type { UpstreamRegistry } from '../registry/mirror/ports.js';
import { DEFAULT_REGISTRY_SETTINGS, type RegistrySettings } from '../registry/settings.js';

export interface CoreSettings {
  /** A worker silent this long is `OFFLINE` (SPEC §8: 60 s). */
  heartbeatTimeoutSeconds: number;
  /** `PROCESSING` jobs of a worker silent this long become `FAILED` (DESIGN §3: 120 s). */
  lostJobTimeoutSeconds: number;
  /** How long a cancelled job keeps being announced in heartbeat answers. */
  cancelNoticeSeconds: number;
  /** Agents are told to heartbeat this often (SPEC §4.2: 30 s). */
  heartbeatIntervalSeconds: number;
  /**
   * Steady heartbeats are written together this often (`HeartbeatBuffer`); 0 writes each with its
   * request.
   */
  heartbeatFlushSeconds: number;
  /** How long a worker's verified credentials are reused without a database read (0: never). */
  workerCredentialCacheSeconds: number;
  /**
   * How long an API token's verified authentication (the token, its creator and their
   * memberships) is reused without a database read (0: never).
   */
  apiTokenCacheSeconds: number;
  /** A state file larger than this is refused (`413 state_too_large`), before or while it streams. */
  maxStateBytes: number;
  /** The versions of a vine's state kept; older ones are pruned as new ones are written. */
  stateVersionsKept: number;
  /** A job's `execution_metadata` as merged across its updates, serialised (`413 metadata_too_large`). */
  maxExecutionMetadataBytes: number;
  /** A job's log takes this many bytes; past it one `SYSTEM` line says the log was cut. */
  maxLogBytesPerJob: number;
  /** A cancelled job still takes log chunks this long (its engine winds down, the agent flushes). */
  logGraceMinutes: number;
  /** Logs of jobs finished longer ago than this are deleted; 0 keeps them forever. */
  logRetentionDays: number;
  /** Audit entries older than this many days are pruned; 0 keeps them forever. */
  auditRetentionDays: number;
  /** A deleted vine's state versions are kept this many days, then purged; 0 keeps them forever. */
  deletedVineRetentionDays: number;
  /** `limit` of every list endpoint (issue 10 §2: default 50, at most 200). */
  pageLimits: PageLimits;
  /** Notification delivery (issue 14). */
  notifications: NotificationSettings;
  /** The OIDC issuer of job identity tokens (issue 16). */
  workloadIdentity: WorkloadIdentitySettings;
  /** The outbox of notification deliveries and git provider feedback (issue 24). */
  outbox: OutboxSettings;
  /** An owner's repository connections with a manual webhook, at most (`409 vcs_connection_limit`). */
  maxManualVcsConnections: number;
  /** The Terraform Cloud protocol (issue 26). */
  tfe: TfeSettings;
  /** The provider mirror's limits on an archive, and the hosts it pulls through from (issue 28). */
  mirror: MirrorSettings;
  /** The private registry (issue 28). */
  registry: RegistrySettings;
}

export interface WorkloadIdentitySettings {
  /** `iss` of job tokens and the discovery document (mutable: follows the bound port in development). */
  issuer: string;
  /** The algorithm of newly generated keys. */
  algorithm: SigningAlgorithm;
  /** A job token's lifetime (the job's limit; default one hour, at most twelve). */
  tokenLifetimeSeconds: number;
  /** A signing key older than this is replaced at the next use (0: only `keys rotate`). */
  keyRotationSeconds: number;
}

/** Tokens live at most this long; a retired key is served this long plus a minute of clock skew. */
export const MAX_IDENTITY_TOKEN_LIFETIME_SECONDS = 12 * 3600;

export const DEFAULT_WORKLOAD_IDENTITY_SETTINGS: WorkloadIdentitySettings = {
  issuer: 'http://localhost:8080',
  algorithm: 'RS256',
  tokenLifetimeSeconds: 3600,
  keyRotationSeconds: 0,
};

export const DEFAULT_CORE_SETTINGS: CoreSettings = {
  heartbeatTimeoutSeconds: 60,
  lostJobTimeoutSeconds: 120,
  cancelNoticeSeconds: 600,
  heartbeatIntervalSeconds: 30,
  heartbeatFlushSeconds: 1,
  workerCredentialCacheSeconds: 5,
  apiTokenCacheSeconds: 5,
  maxStateBytes: 64 * 1024 * 1024,
  stateVersionsKept: 100,
  maxExecutionMetadataBytes: 1024 * 1024,
  maxLogBytesPerJob: 64 * 1024 * 1024,
  logGraceMinutes: 5,
  logRetentionDays: 90,
  auditRetentionDays: 365,
  deletedVineRetentionDays: 30,
  pageLimits: DEFAULT_PAGE_LIMITS,
  notifications: DEFAULT_NOTIFICATION_SETTINGS,
  workloadIdentity: DEFAULT_WORKLOAD_IDENTITY_SETTINGS,
  outbox: DEFAULT_OUTBOX_SETTINGS,
  maxManualVcsConnections: 50,
  tfe: DEFAULT_TFE_SETTINGS,
  mirror: DEFAULT_MIRROR_SETTINGS,
  registry: DEFAULT_REGISTRY_SETTINGS,
};

/** The sign-in providers and git hosts this server is configured for (absent: not configured). */
export interface ProviderPorts {
  signIn: Partial<Record<IdentityProvider, SignInProvider>>;
  repositories: Partial<Record<GitProvider, RepositoryLister>>;
}

/** One git provider's API and webhook reader, for git-driven runs (issue 13). */
export interface VcsPort {
  api: VcsApi;
  webhooks: VcsWebhookReader;
  /** The HTTPS clone URL of `owner/name` at this provider's (configured) web address, without credentials. */
  cloneUrl(repository: string): string;
}

/** The git providers this server can connect vines to (absent: not configured). */
export type VcsPorts = Partial<Record<GitProvider, VcsPort>>;

export const NO_PROVIDERS: ProviderPorts = Object.freeze({ signIn: {}, repositories: {} });

export interface CoreDeps {
  uow: UnitOfWork;
  clock: Clock;
  random: Random;
  events: EventBus;
  artifacts: ArtifactStore;
  /** Checks configuration tarballs before they are recorded (issue 23). */
  tarballs: TarballChecker;
  /** Reads GPG keys and checks the signatures of the registry's providers (issue 28). */
  pgp: PgpVerifier;
  /**
   * The origin registries the provider mirror pulls through from (`settings.mirror.upstreams`);
   * absent: pull-through is off whatever the settings say.
   */
  upstreamRegistry?: UpstreamRegistry;
  signer: TokenSigner;
  /** Encrypts provider tokens at rest. */
  secrets: SecretBox;
  providers: ProviderPorts;
  /** Git providers' APIs and webhook readers (issue 13), per configured provider. */
  vcs: VcsPorts;
  /** Outbound HTTP of notifications. */
  webhooks: WebhookSender;
  /** Checks policy modules when saved (issue 15); absent: this server has no engine. */
  policyCompiler?: PolicyCompiler;
  /** Signs job identity tokens (issue 16). */
  jws: JwsSigner;
  /** Fixed-window counters shared by the replicas (limits that belong to an owner, not an address). */
  rateLimits: RateLimitStore;
  settings: CoreSettings;
}

/**
 * Events are announced after their transaction commits. Delivery is best effort: listeners
 * (SSE streams, long-polled claims) also re-read on a timer, so a lost event delays, never loses.
 */
export async function announce(events: EventBus, event: TrellisEvent): Promise<void> {
  try {
    await events.publish(event);
  } catch {
    // Deliberately ignored: the change is committed and readers poll as a fallback.
  }
}

export function isoNow(deps: Pick<CoreDeps, 'clock'>): string {
  return deps.clock.now().toISOString();
}

export function isoSecondsBefore(now: Date, seconds: number): string {
  return new Date(now.getTime() - seconds * 1000).toISOString();
}
