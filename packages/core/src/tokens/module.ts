import type { CoreModule } from '../modules/CoreModule.js';
import { useCase } from '../modules/CoreModule.js';
import { coreServices, serviceRef } from '../tokens.js';
import { ApiTokenUseCases } from './ApiTokenUseCases.js';

/** API tokens of people and organizations (issue 13). */
export const tokenServices = {
  apiTokens: serviceRef<ApiTokenUseCases>('trellis.tokens.api-tokens'),
} as const;

export const tokensModule: CoreModule = {
  name: 'tokens',
  useCases: [useCase('apiTokens', tokenServices.apiTokens, (get) => new ApiTokenUseCases(get(coreServices.deps)))],
};
