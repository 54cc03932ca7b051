import type { CoreDeps } from '../usecases/CoreDeps.js';
import type { UseCases } from '../usecases/createUseCases.js';
import { coreServices, type ServiceRef } from '../tokens.js';
import { type CoreModule, orderedHooks, type Resolve, type ServiceProvider, service } from './CoreModule.js';

/**
 * Every service of `modules` and the two that gather them: the lifecycle's hooks (every module's,
 * stage by stage) and `UseCases` (each use case resolved by its token, so a replaced one is what
 * the HTTP layer calls). The composition root registers each in its container; `createUseCases`
 * in a plain map.
 */
export function moduleServices(modules: readonly CoreModule[]): ServiceProvider[] {
  const providers = modules.flatMap((module) => module.useCases);
  return [
    ...providers,
    service(coreServices.jobHooks, (get) =>
      orderedHooks(modules, {
        credentials: get(coreServices.workerCredentials),
        configurationVersions: get<UseCases['configurationVersions']>(refOf(providers, 'configurationVersions')),
      }),
    ),
    service(coreServices.useCases, (get) => {
      const useCases: Record<string, unknown> = {};
      for (const provider of providers) if (provider.key) useCases[provider.key] = get(provider.ref);
      return useCases as unknown as UseCases;
    }),
  ];
}

function refOf(providers: readonly ServiceProvider[], key: keyof UseCases): ServiceRef<never> {
  const provider = providers.find((candidate) => candidate.key === key);
  if (!provider) throw new Error(`no module provides the use case "${key}"`);
  return provider.ref as ServiceRef<never>;
}

/** A registry without a DI library: each service made once, on first use. */
export function resolveModules(deps: CoreDeps, modules: readonly CoreModule[]): Resolve {
  const providers = new Map<string, ServiceProvider>(moduleServices(modules).map((p) => [p.ref.id, p]));
  const made = new Map<string, unknown>([[coreServices.deps.id, deps]]);
  const get: Resolve = <T>(ref: ServiceRef<T>): T => {
    if (!made.has(ref.id)) {
      const provider = providers.get(ref.id);
      if (!provider) throw new Error(`no service registered under ${ref.id}`);
      made.set(ref.id, provider.create(get));
    }
    return made.get(ref.id) as T;
  };
  return get;
}
