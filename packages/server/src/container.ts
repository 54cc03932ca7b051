import 'reflect-metadata';
import {
  type ArtifactStore,
  type Clock,
  type CoreSettings,
  coreServices,
  type CoreDeps,
  type CoreModule,
  CORE_MODULES,
  moduleServices,
  type EventBus,
  type JwsSigner,
  type ProviderPorts,
  type VcsPorts,
  type Random,
  type SecretBox,
  type ServiceRef,
  type TokenSigner,
  type UnitOfWork,
  type WebhookSender,
  type PolicyCompiler,
  type RateLimitStore,
  type TarballChecker,
  type PgpVerifier,
  type UpstreamRegistry,
} from '@trellis/core';
import { type DependencyContainer, container as rootContainer, instanceCachingFactory } from 'tsyringe';

export function resolve<T>(container: DependencyContainer, ref: ServiceRef<T>): T {
  return container.resolve<T>(ref.id);
}

export interface Adapters {
  uow: UnitOfWork;
  artifacts: ArtifactStore;
  events: EventBus;
  clock: Clock;
  random: Random;
  signer: TokenSigner;
  secrets: SecretBox;
  providers: ProviderPorts;
  vcs: VcsPorts;
  webhooks: WebhookSender;
  policyCompiler: PolicyCompiler;
  jws: JwsSigner;
  rateLimits: RateLimitStore;
  tarballs: TarballChecker;
  pgp: PgpVerifier;
  upstreamRegistry: UpstreamRegistry;
  settings: CoreSettings;
}

/**
 * The composition root's container, the registry the modules fill: every port under core's typed
 * tokens, the ports as `CoreDeps`, and every module's services under their own tokens, each made
 * once, on first use, by its module's factory (core carries no decorators). An embedder replaces
 * any of them by registering under its token (`ControlPlaneOptions.overrides`).
 */
export function buildContainer(adapters: Adapters, modules: readonly CoreModule[] = CORE_MODULES): DependencyContainer {
  const container = rootContainer.createChildContainer();
  container.register(coreServices.unitOfWork.id, { useValue: adapters.uow });
  container.register(coreServices.artifactStore.id, { useValue: adapters.artifacts });
  container.register(coreServices.eventBus.id, { useValue: adapters.events });
  container.register(coreServices.clock.id, { useValue: adapters.clock });
  container.register(coreServices.random.id, { useValue: adapters.random });
  container.register(coreServices.tokenSigner.id, { useValue: adapters.signer });
  container.register(coreServices.secretBox.id, { useValue: adapters.secrets });
  container.register(coreServices.providers.id, { useValue: adapters.providers });
  container.register(coreServices.vcs.id, { useValue: adapters.vcs });
  container.register(coreServices.settings.id, { useValue: adapters.settings });
  container.register(coreServices.webhookSender.id, { useValue: adapters.webhooks });
  container.register(coreServices.policyCompiler.id, { useValue: adapters.policyCompiler });
  container.register(coreServices.jwsSigner.id, { useValue: adapters.jws });
  container.register(coreServices.rateLimits.id, { useValue: adapters.rateLimits });
  container.register(coreServices.tarballs.id, { useValue: adapters.tarballs });
  container.register(coreServices.pgp.id, { useValue: adapters.pgp });
  container.register(coreServices.upstreamRegistry.id, { useValue: adapters.upstreamRegistry });
  container.register(coreServices.deps.id, {
    useFactory: instanceCachingFactory<CoreDeps>((c) => ({
      uow: resolve(c, coreServices.unitOfWork),
      artifacts: resolve(c, coreServices.artifactStore),
      events: resolve(c, coreServices.eventBus),
      clock: resolve(c, coreServices.clock),
      random: resolve(c, coreServices.random),
      signer: resolve(c, coreServices.tokenSigner),
      secrets: resolve(c, coreServices.secretBox),
      providers: resolve(c, coreServices.providers),
      vcs: resolve(c, coreServices.vcs),
      webhooks: resolve(c, coreServices.webhookSender),
      policyCompiler: resolve(c, coreServices.policyCompiler),
      jws: resolve(c, coreServices.jwsSigner),
      rateLimits: resolve(c, coreServices.rateLimits),
      tarballs: resolve(c, coreServices.tarballs),
      pgp: resolve(c, coreServices.pgp),
      upstreamRegistry: resolve(c, coreServices.upstreamRegistry),
      settings: resolve(c, coreServices.settings),
    })),
  });
  // The modules' loop: each service under its token, the hooks and `UseCases` gathered from them.
  for (const provider of moduleServices(modules)) {
    container.register(provider.ref.id, {
      useFactory: instanceCachingFactory((c) => provider.create((ref) => resolve(c, ref))),
    });
  }
  return container;
}
