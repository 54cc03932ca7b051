import type { CoreModule } from '../../modules/CoreModule.js';
import { useCase } from '../../modules/CoreModule.js';
import { coreServices, serviceRef } from '../../tokens.js';
import { ModuleUsageUseCases } from './ModuleUsageUseCases.js';
import { RegistryModuleUseCases } from './RegistryModuleUseCases.js';

/** The module registry of the private registry (issue 28). */
export const registryModuleServices = {
  modules: serviceRef<RegistryModuleUseCases>('trellis.registry.modules'),
  usage: serviceRef<ModuleUsageUseCases>('trellis.registry.module-usage'),
} as const;

export const registryModulesModule: CoreModule = {
  name: 'registryModules',
  useCases: [
    useCase(
      'registryModules',
      registryModuleServices.modules,
      (get) => new RegistryModuleUseCases(get(coreServices.deps)),
    ),
    useCase(
      'moduleUsage',
      registryModuleServices.usage,
      (get) => new ModuleUsageUseCases(get(coreServices.deps), get(registryModuleServices.modules)),
    ),
  ],
};
