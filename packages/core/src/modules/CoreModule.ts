import type { WorkerCredentialCache } from '../auth/WorkerCredentialCache.js';
import type { ConfigurationVersionUseCases } from '../configurationVersions/ConfigurationVersionUseCases.js';
import type { JobHook } from '../jobs/hooks.js';
import type { ServiceRef } from '../tokens.js';
import type { UseCases } from '../usecases/createUseCases.js';

/** What a service's factory is given: any other service, by its typed token. */
export type Resolve = <T>(ref: ServiceRef<T>) => T;

/**
 * A service a module registers: its typed token and a factory. The composition root registers
 * the factory under the token (tsyringe, one instance each); an embedder replaces the service by
 * registering another under the same token. `key` names its place in `UseCases`, the object the
 * HTTP layer and the web interface call; services without one are shared within core.
 */
export interface ServiceProvider<T = unknown> {
  readonly ref: ServiceRef<T>;
  readonly key?: keyof UseCases;
  create(get: Resolve): T;
}

/** A use case of `UseCases[key]`, registered under `ref`. */
export function useCase<K extends keyof UseCases>(
  key: K,
  ref: ServiceRef<UseCases[K]>,
  create: (get: Resolve) => UseCases[K],
): ServiceProvider<UseCases[K]> {
  return { key, ref, create };
}

/** A service shared within core (not part of `UseCases`), registered under `ref`. */
export function service<T>(ref: ServiceRef<T>, create: (get: Resolve) => T): ServiceProvider<T> {
  return { ref, create };
}

/** What some hooks need beyond the ports: this replica's caches and the configuration versions. */
export interface JobHookServices {
  credentials?: WorkerCredentialCache;
  /** Makes git-driven jobs' configuration versions as they are queued (issue 23). */
  configurationVersions?: ConfigurationVersionUseCases;
}

/**
 * When a hook runs among the others: first what completes the change itself (the vine's
 * components), then what reports it (notifications, approvals, the git provider, drift results),
 * then what it makes happen next (a destroyed worker's jobs, auto-deploy, run triggers), and last
 * the live announcements. Within a stage, hooks run in the order of the modules' list.
 */
export const HOOK_STAGES = ['complete', 'report', 'follow', 'announce'] as const;
export type HookStage = (typeof HOOK_STAGES)[number];
export type StagedHooks = Partial<Record<HookStage, readonly JobHook[]>>;

/**
 * A feature's part in core: its services under typed tokens (`useCases`) and its hooks on the job
 * lifecycle. `trellis-server` adds the feature's settings, routes, pages and background tasks
 * (`packages/server/src/modules.ts`); docs/architecture.md, "Modules".
 */
export interface CoreModule {
  readonly name: string;
  readonly useCases: readonly ServiceProvider[];
  readonly hooks?: (services: JobHookServices) => StagedHooks;
}

/** Every hook of `modules`, stage by stage, each stage in the modules' order. */
export function orderedHooks(modules: readonly CoreModule[], services: JobHookServices = {}): JobHook[] {
  const staged = modules.map((module) => module.hooks?.(services) ?? {});
  return HOOK_STAGES.flatMap((stage) => staged.flatMap((hooks) => hooks[stage] ?? []));
}
