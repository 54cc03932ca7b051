import type { TarballChecker } from './configurationVersions/ports.js';
import type { PgpVerifier } from './registry/providers/ports.js';
import type { UpstreamRegistry } from './registry/mirror/ports.js';
/**
 * Typed injection tokens with stable ids (Backstage's `createServiceRef`): `server` registers an
 * implementation under each with tsyringe factories; `core` itself needs no DI library.
 */
import type { RateLimitStore } from './ports/RateLimitStore.js';
import type { ArtifactStore } from './ports/ArtifactStore.js';
import type { Clock } from './ports/Clock.js';
import type { EventBus } from './ports/EventBus.js';
import type { PolicyCompiler } from './ports/PolicyCompiler.js';
import type { JwsSigner } from './ports/JwsSigner.js';
import type { Random } from './ports/Random.js';
import type { SecretBox } from './ports/SecretBox.js';
import type { TokenSigner } from './ports/TokenSigner.js';
import type { UnitOfWork } from './ports/UnitOfWork.js';
import type { WebhookSender } from './ports/WebhookSender.js';
import type { WorkerCredentialCache } from './auth/WorkerCredentialCache.js';
import type { JobHook } from './jobs/hooks.js';
import type { JobLifecycle } from './jobs/JobLifecycle.js';
import type { HeartbeatBuffer } from './usecases/HeartbeatBuffer.js';
import type { CoreDeps, CoreSettings, ProviderPorts, VcsPorts } from './usecases/CoreDeps.js';
import type { UseCases } from './usecases/createUseCases.js';

export interface ServiceRef<T> {
  readonly id: string;
  /** Type carrier only; never read. */
  readonly T?: T;
}

/** A typed token: each module declares its services' tokens beside its code (`<feature>/module.ts`). */
export function serviceRef<T>(id: string): ServiceRef<T> {
  return Object.freeze({ id });
}

export const coreServices = {
  unitOfWork: serviceRef<UnitOfWork>('trellis.core.unit-of-work'),
  artifactStore: serviceRef<ArtifactStore>('trellis.core.artifact-store'),
  clock: serviceRef<Clock>('trellis.core.clock'),
  random: serviceRef<Random>('trellis.core.random'),
  tokenSigner: serviceRef<TokenSigner>('trellis.core.token-signer'),
  eventBus: serviceRef<EventBus>('trellis.core.event-bus'),
  secretBox: serviceRef<SecretBox>('trellis.core.secret-box'),
  providers: serviceRef<ProviderPorts>('trellis.core.providers'),
  vcs: serviceRef<VcsPorts>('trellis.core.vcs'),
  settings: serviceRef<CoreSettings>('trellis.core.settings'),
  webhookSender: serviceRef<WebhookSender>('trellis.core.webhook-sender'),
  policyCompiler: serviceRef<PolicyCompiler>('trellis.core.policy-compiler'),
  jwsSigner: serviceRef<JwsSigner>('trellis.core.jws-signer'),
  rateLimits: serviceRef<RateLimitStore>('trellis.core.rate-limits'),
  tarballs: serviceRef<TarballChecker>('trellis.core.tarballs'),
  pgp: serviceRef<PgpVerifier>('trellis.core.pgp'),
  upstreamRegistry: serviceRef<UpstreamRegistry>('trellis.core.upstream-registry'),
  /** The ports above as one object: what every use case is built with. */
  deps: serviceRef<CoreDeps>('trellis.core.deps'),
  /** Every use case, each resolved from its module's token. */
  useCases: serviceRef<UseCases>('trellis.core.use-cases'),
  /** The hooks on the job lifecycle, every module's, in the order they run. */
  jobHooks: serviceRef<readonly JobHook[]>('trellis.core.job-hooks'),
  jobLifecycle: serviceRef<JobLifecycle>('trellis.core.job-lifecycle'),
  workerCredentials: serviceRef<WorkerCredentialCache>('trellis.core.worker-credentials'),
  heartbeats: serviceRef<HeartbeatBuffer>('trellis.core.heartbeats'),
} as const;
