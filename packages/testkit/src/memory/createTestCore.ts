import { OpenPgpVerifier } from '@trellis/artifacts-fs/openpgp';
import { TarGzChecker } from '@trellis/artifacts-fs/tarballs';
import {
  AesGcmSecretBox,
  type CoreDeps,
  type CoreSettings,
  createUseCases,
  DEFAULT_CORE_SETTINGS,
  MemoryRateLimitStore,
  NO_PROVIDERS,
  type ProviderPorts,
  type VcsPorts,
  type PolicyCompiler,
  type Random,
  type SecretBox,
  type UnitOfWork,
  type UpstreamRegistry,
  type UseCases,
  type WebhookSender,
} from '@trellis/core';
import { JoseJwsSigner } from '@trellis/http/jws';
import { FakeClock } from './FakeClock.js';
import { FakeRandom } from './FakeRandom.js';
import { FakeTokenSigner } from './FakeTokenSigner.js';
import { FakeWebhookSender } from './FakeWebhookSender.js';
import { MemoryArtifactStore } from './MemoryArtifactStore.js';
import { MemoryEventBus } from './MemoryEventBus.js';
import { MemoryUnitOfWork, type StoresWrapper } from './MemoryUnitOfWork.js';

export interface TestCoreOptions {
  /** Merged over `DEFAULT_CORE_SETTINGS`. */
  settings?: Partial<CoreSettings>;
  /** Start time of the fake clock. */
  now?: Date | string | number;
  /** Seed of the deterministic `FakeRandom` (ignored when `random` is given). */
  seed?: string | number;
  random?: Random;
  jwtSecret?: string;
  wrapStores?: StoresWrapper;
  /** Sign-in providers and git hosts (default: none configured). */
  providers?: ProviderPorts;
  /** Git providers' APIs for git-driven runs (default: none configured). */
  vcs?: VcsPorts;
  /** Default: AES-256-GCM under `TEST_ENCRYPTION_KEY`. */
  secrets?: SecretBox;
  /** Default: a `FakeWebhookSender` that sends nothing. */
  webhooks?: WebhookSender;
  /** Default: none (modules are not compiled when saved, as on a server without OPA). */
  policyCompiler?: PolicyCompiler;
  /** The provider mirror's origin registries (default: none; pull-through is off). */
  upstreamRegistry?: UpstreamRegistry;
}

/** The key the test core seals provider tokens with, so a test can open what it finds stored. */
export const TEST_ENCRYPTION_KEY = new Uint8Array(32).fill(7);

/** The core wired from fakes; each part is exposed so a test can move time or break a port. */
export interface TestCore<U extends UnitOfWork = MemoryUnitOfWork> {
  deps: CoreDeps;
  useCases: UseCases;
  clock: FakeClock;
  random: Random;
  uow: U;
  events: MemoryEventBus;
  artifacts: MemoryArtifactStore;
  signer: FakeTokenSigner;
  secrets: SecretBox;
  webhooks: WebhookSender;
  settings: CoreSettings;
}

export function createTestCore(options: TestCoreOptions = {}): TestCore {
  return createTestCoreOn(new MemoryUnitOfWork({ wrapStores: options.wrapStores }), options);
}

/**
 * The same core on another unit of work (the SQL stores, say): fakes for every other port, so a
 * suite written against `TestCore` runs on a real database too.
 */
export function createTestCoreOn<U extends UnitOfWork>(
  uow: U,
  options: Omit<TestCoreOptions, 'wrapStores'> = {},
): TestCore<U> {
  const clock = new FakeClock(options.now);
  const random = options.random ?? new FakeRandom(options.seed);
  const events = new MemoryEventBus();
  const artifacts = new MemoryArtifactStore();
  const signer = new FakeTokenSigner(clock, options.jwtSecret);
  const settings: CoreSettings = { ...DEFAULT_CORE_SETTINGS, ...options.settings };
  const secrets = options.secrets ?? new AesGcmSecretBox([TEST_ENCRYPTION_KEY]);
  const providers = options.providers ?? NO_PROVIDERS;
  const webhooks = options.webhooks ?? new FakeWebhookSender();
  const jws = new JoseJwsSigner();
  const deps: CoreDeps = {
    uow,
    clock,
    random,
    events,
    artifacts,
    signer,
    secrets,
    providers,
    vcs: options.vcs ?? {},
    webhooks,
    settings,
    ...(options.policyCompiler ? { policyCompiler: options.policyCompiler } : {}),
    jws,
    rateLimits: new MemoryRateLimitStore(),
    tarballs: new TarGzChecker(),
    pgp: new OpenPgpVerifier(),
    ...(options.upstreamRegistry ? { upstreamRegistry: options.upstreamRegistry } : {}),
  };
  return {
    deps,
    useCases: createUseCases(deps),
    clock,
    random,
    uow,
    events,
    artifacts,
    signer,
    secrets,
    webhooks,
    settings,
  };
}
