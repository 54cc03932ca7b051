import type { UseCases } from '@trellis/core';
import {
  ConnectModuleRepositoryBody,
  ModuleParams,
  ModuleRepositoryList,
  ModuleRepositoryRecord,
} from '@trellis/contract';
import { z } from 'zod';
import { defineRoute, type RouteSpec } from '../../routing/route.js';

/** Beside the modules' own paths, never under them: `…/{system}/{version}` takes any last segment there. */
const REPOSITORY_PATH = '/api/registry/module-repositories/{namespace}/{name}/{system}';

const NamespaceParams = z.object({ namespace: z.string().describe('the registry namespace') });

/** Modules published from git tags (issue 28, docs/registry.md "From git tags"). */
export function moduleRepositoryRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
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
      handler: async ({ user, params, body }) => ({
        status: 200,
        body: await useCases.moduleRepositories.connect(user, params, body),
      }),
    }),
    defineRoute({
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
      handler: async ({ user, params }) => ({ status: 200, body: await useCases.moduleRepositories.get(user, params) }),
    }),
    defineRoute({
      method: 'delete',
      path: REPOSITORY_PATH,
      operationId: 'disconnectModuleRepository',
      summary: 'Disconnect a module from its git repository (its versions stay)',
      description: 'Deletes the hook Trellis created. Needs the admin role in the namespace.',
      tags: ['registry'],
      auth: 'user',
      params: ModuleParams,
      responses: { 204: { description: 'Disconnected' }, 404: { description: '`module_repository_not_found`' } },
      handler: async ({ user, params }) => {
        await useCases.moduleRepositories.disconnect(user, params);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/registry/module-repositories/{namespace}',
      operationId: 'listModuleRepositories',
      summary: "A namespace's modules connected to git repositories",
      tags: ['registry'],
      auth: 'user',
      params: NamespaceParams,
      responses: { 200: { description: 'The connections, by module', schema: ModuleRepositoryList } },
      handler: async ({ user, params }) => ({
        status: 200,
        body: { repositories: await useCases.moduleRepositories.list(user, params.namespace) },
      }),
    }),
  ];
}
