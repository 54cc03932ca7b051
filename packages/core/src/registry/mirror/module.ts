import type { CoreModule } from '../../modules/CoreModule.js';
import { useCase } from '../../modules/CoreModule.js';
import { coreServices, serviceRef } from '../../tokens.js';
import { JobRegistryAccess } from '../jobRegistry.js';
import { RegistryNamespaces } from '../namespaces.js';
import { MirrorUseCases } from './MirrorUseCases.js';

/** The provider network mirror and the job-scoped registry credentials agents use (issue 28). */
export const mirrorServices = {
  mirror: serviceRef<MirrorUseCases>('trellis.registry.mirror'),
  jobRegistry: serviceRef<JobRegistryAccess>('trellis.registry.job-registry'),
} as const;

export const mirrorModule: CoreModule = {
  name: 'mirror',
  useCases: [
    useCase('mirror', mirrorServices.mirror, (get) => {
      const deps = get(coreServices.deps);
      return new MirrorUseCases(deps, new RegistryNamespaces(deps), deps.settings.mirror);
    }),
    useCase('jobRegistry', mirrorServices.jobRegistry, (get) => new JobRegistryAccess(get(coreServices.deps))),
  ],
};
