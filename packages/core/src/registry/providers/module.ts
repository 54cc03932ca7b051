import type { CoreModule } from '../../modules/CoreModule.js';
import { useCase } from '../../modules/CoreModule.js';
import { coreServices, serviceRef } from '../../tokens.js';
import { GpgKeyUseCases } from './GpgKeyUseCases.js';
import { RegistryProviderUseCases } from './RegistryProviderUseCases.js';

/** The private registry's providers (`providers.v1`) and the namespaces' GPG keys (issue 28). */
export const registryProviderServices = {
  providers: serviceRef<RegistryProviderUseCases>('trellis.registry.providers'),
  gpgKeys: serviceRef<GpgKeyUseCases>('trellis.registry.gpgKeys'),
} as const;

export const registryProvidersModule: CoreModule = {
  name: 'registryProviders',
  useCases: [
    useCase(
      'registryProviders',
      registryProviderServices.providers,
      (get) => new RegistryProviderUseCases(get(coreServices.deps)),
    ),
    useCase('gpgKeys', registryProviderServices.gpgKeys, (get) => new GpgKeyUseCases(get(coreServices.deps))),
  ],
};
