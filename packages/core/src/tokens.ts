import type { TarballChecker } from './configurationVersions/ports.js';
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
import type { CoreSettings, ProviderPorts, VcsPorts } from './usecases/CoreDeps.js';
import type { UseCases } from './usecases/createUseCases.js';

export interface ServiceRef<T> {
  readonly id: string;
  /** Type carrier only; never read. */
  readonly T?: T;
}

function serviceRef<T>(id: string): ServiceRef<T> {
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
  useCases: serviceRef<UseCases>('trellis.core.use-cases'),
} as const;
