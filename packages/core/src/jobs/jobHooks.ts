import type { CoreModule, JobHookServices } from '../modules/CoreModule.js';
import { orderedHooks } from '../modules/CoreModule.js';
import { CORE_MODULES } from '../modules/coreModules.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import type { JobHook } from './hooks.js';
import { JobLifecycle } from './JobLifecycle.js';

export type { JobHookServices } from '../modules/CoreModule.js';

/**
 * Every hook on the job lifecycle, in the order they run: each module declares its hooks beside
 * its code (`<feature>/module.ts`) by stage (`HOOK_STAGES`: complete, report, follow, announce),
 * and they run stage by stage, each stage in the order of the modules' list.
 */
export function jobHooks(
  services: JobHookServices = {},
  modules: readonly CoreModule[] = CORE_MODULES,
): readonly JobHook[] {
  return orderedHooks(modules, services);
}

/** A lifecycle with every module's hooks (what `createUseCases` shares is made by its module). */
export function createJobLifecycle(deps: CoreDeps, services: JobHookServices = {}): JobLifecycle {
  return new JobLifecycle(deps, jobHooks(services));
}
