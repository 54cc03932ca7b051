import type { CoreModule } from '../../modules/CoreModule.js';
import { useCase } from '../../modules/CoreModule.js';
import { coreServices, serviceRef } from '../../tokens.js';
import { registryModuleServices } from '../modules/module.js';
import { ModuleDocsUseCases } from '../moduleFiles/ModuleDocsUseCases.js';
import { ModuleRepositoryUseCases } from './ModuleRepositoryUseCases.js';
import { ModuleTagUseCases } from './ModuleTagUseCases.js';

/** Modules published from git tags (issue 28): connections of modules to repositories, and their tag pushes. */
export const moduleRepositoryServices = {
  repositories: serviceRef<ModuleRepositoryUseCases>('trellis.registry.module-repositories'),
  tags: serviceRef<ModuleTagUseCases>('trellis.registry.module-tags'),
  docs: serviceRef<ModuleDocsUseCases>('trellis.registry.module-docs'),
} as const;

export const moduleRepositoriesModule: CoreModule = {
  name: 'moduleRepositories',
  useCases: [
    useCase(
      'moduleRepositories',
      moduleRepositoryServices.repositories,
      (get) => new ModuleRepositoryUseCases(get(coreServices.deps)),
    ),
    useCase(
      'moduleTags',
      moduleRepositoryServices.tags,
      (get) => new ModuleTagUseCases(get(coreServices.deps), get(registryModuleServices.modules)),
    ),
    useCase(
      'moduleDocs',
      moduleRepositoryServices.docs,
      (get) => new ModuleDocsUseCases(get(coreServices.deps), get(registryModuleServices.modules)),
    ),
  ],
};
