import type { CoreModule } from '../modules/CoreModule.js';
import { service, useCase } from '../modules/CoreModule.js';
import { coreServices, serviceRef } from '../tokens.js';
import { ApiTokenCache } from './ApiTokenCache.js';
import { ApiTokenUseCases } from './ApiTokenUseCases.js';

/** API tokens of people and organizations (issue 13). */
export const tokenServices = {
  apiTokens: serviceRef<ApiTokenUseCases>('trellis.tokens.api-tokens'),
  cache: serviceRef<ApiTokenCache>('trellis.tokens.cache'),
} as const;

export const tokensModule: CoreModule = {
  name: 'tokens',
  useCases: [
    service(tokenServices.cache, (get) => {
      const deps = get(coreServices.deps);
      return new ApiTokenCache(deps.clock, deps.settings.apiTokenCacheSeconds, deps.events);
    }),
    useCase(
      'apiTokens',
      tokenServices.apiTokens,
      (get) => new ApiTokenUseCases(get(coreServices.deps), get(tokenServices.cache)),
    ),
  ],
};
