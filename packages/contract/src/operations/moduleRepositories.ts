/** Modules published from git tags: each operation as data (served by `http/src/registry/gitTags/moduleRepositoryRoutes.ts`). */
import { z } from 'zod';
import { operation } from '../operation.js';
import { ConnectModuleRepositoryBody, ModuleParams, ModuleRepositoryList, ModuleRepositoryRecord } from '../schemas.js';

const REPOSITORY_PATH = '/api/registry/module-repositories/{namespace}/{name}/{system}';

const NamespaceParams = z.object({ namespace: z.string().describe('the registry namespace') });

export const connectModuleRepository = operation({
  method: 'put',
  path: REPOSITORY_PATH,
  operationId: 'connectModuleRepository',
  summary: 'Connect a module to a git repository: its version tags publish',
  description:
    'A push of a tag `v1.2.0` (or `1.2.0`) to the repository publishes version `1.2.0` of the module from the ' +
    'tagged commit, through the same webhook endpoint as git-driven runs (`webhook_url`). `auto` creates the hook ' +
    "with your sign-in at the provider; `manual` answers the secret once. Replaces the module's previous repository. " +
    'Needs the admin role in the namespace.',
  tags: ['registry'],
  auth: 'user',
  params: ModuleParams,
  body: ConnectModuleRepositoryBody,
  responses: {
    200: { description: 'The connection', schema: ModuleRepositoryRecord },
    409: { description: '`provider_not_linked`: sign in with the provider first (or connect with `manual`)' },
  },
});

export const getModuleRepository = operation({
  method: 'get',
  path: REPOSITORY_PATH,
  operationId: 'getModuleRepository',
  summary: "A module's git repository, and what its newest tag push did",
  tags: ['registry'],
  auth: 'user',
  params: ModuleParams,
  responses: {
    200: { description: 'The connection', schema: ModuleRepositoryRecord },
    404: { description: '`module_repository_not_found`' },
  },
});

export const disconnectModuleRepository = operation({
  method: 'delete',
  path: REPOSITORY_PATH,
  operationId: 'disconnectModuleRepository',
  summary: 'Disconnect a module from its git repository (its versions stay)',
  description: 'Deletes the hook Trellis created. Needs the admin role in the namespace.',
  tags: ['registry'],
  auth: 'user',
  params: ModuleParams,
  responses: { 204: { description: 'Disconnected' }, 404: { description: '`module_repository_not_found`' } },
});

export const listModuleRepositories = operation({
  method: 'get',
  path: '/api/registry/module-repositories/{namespace}',
  operationId: 'listModuleRepositories',
  summary: "A namespace's modules connected to git repositories",
  tags: ['registry'],
  auth: 'user',
  params: NamespaceParams,
  responses: { 200: { description: 'The connections, by module', schema: ModuleRepositoryList } },
});

/** In the order the API reference lists them. */
export const moduleRepositoriesOperations = {
  connectModuleRepository,
  getModuleRepository,
  disconnectModuleRepository,
  listModuleRepositories,
};
