/** The repositories a person may connect: each operation as data (served by `http/src/vcs/repositoryRoutes.ts`). */
import { operation } from '../operation.js';
import { GitProviderParams, RepositoriesResponse } from '../schemas.js';

export const listRepositories = operation({
  method: 'get',
  path: '/api/cli/repositories/{provider}',
  operationId: 'listRepositories',
  summary: 'Repositories of the user at a git provider',
  description:
    'Uses the token of the sign-in with that provider (stored encrypted) and follows every page, up to 1,000 repositories. `409 provider_not_linked` when the user never signed in with that provider; `401 provider_token_expired` when the provider refuses the token and there is no refresh token to renew it with, or that is refused too (expired or revoked: sign in with that provider again); `429` when the provider rate limits; `503 provider_unavailable` when it cannot be reached. A person’s sign-in: an organization API token gets `403 org_token_not_allowed`.',
  tags: ['repositories'],
  auth: 'user',
  params: GitProviderParams,
  responses: {
    200: { description: 'Repositories', schema: RepositoriesResponse },
    403: { description: '`org_token_not_allowed`' },
  },
});

/** In the order the API reference lists them. */
export const repositoriesOperations = { listRepositories };
