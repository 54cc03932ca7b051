/** The private registry's modules: each operation as data (served by `http/src/registry/modules/moduleRoutes.ts`). */
import { operation } from '../operation.js';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS } from '../paging.js';
import {
  DeprecateModuleVersionBody,
  ListModulesQuery,
  ModuleParams,
  ModuleUsageRecord,
  ModuleVersionParams,
  RegistryModuleList,
  RegistryModuleVersionRecord,
  RegistryModuleVersions,
} from '../schemas.js';

const MODULE_PATH = '/api/registry/modules/{namespace}/{name}/{system}';

export const publishModuleVersion = operation({
  method: 'post',
  path: `${MODULE_PATH}/{version}`,
  operationId: 'publishModuleVersion',
  summary: 'Publish a module version from a tarball',
  description:
    'The body is the `.tar.gz` of the module (its files at the root), sent as `application/gzip`, streamed to the ' +
    'artifact store and checked: gzip, no path or link out of its root, within the size limit ' +
    '(`TRELLIS_REGISTRY_MODULE_MAX_BYTES`, `413 module_too_large`; `422 module_invalid`). Needs the operator role ' +
    'in the namespace. A published version never changes: publishing it again is `409 module_version_exists`.',
  tags: ['registry'],
  auth: 'user',
  params: ModuleVersionParams,
  body: 'binary',
  responses: {
    201: { description: 'The published version', schema: RegistryModuleVersionRecord },
    409: { description: 'This version is already published (`module_version_exists`)' },
    413: { description: 'The tarball is over the limit (`module_too_large`)' },
    415: { description: 'The body is not `application/gzip` (or `application/octet-stream`)' },
    422: { description: 'The tarball is refused (`module_invalid`)' },
  },
});

export const listModules = operation({
  method: 'get',
  path: '/api/registry/modules',
  operationId: 'listModules',
  summary: "A namespace's modules, newest first",
  description: `Needs the viewer role in the namespace. ${PAGED_LIST_DESCRIPTION}`,
  tags: ['registry'],
  auth: 'user',
  query: ListModulesQuery,
  responses: {
    200: { description: 'A page of modules', schema: RegistryModuleList, headers: PAGED_LIST_HEADERS },
  },
});

export const listModuleVersions = operation({
  method: 'get',
  path: `${MODULE_PATH}/versions`,
  operationId: 'listModuleVersions',
  summary: 'A module and its versions, highest first',
  tags: ['registry'],
  auth: 'user',
  params: ModuleParams,
  responses: { 200: { description: 'The module and its versions', schema: RegistryModuleVersions } },
});

export const getModuleUsage = operation({
  method: 'get',
  path: `${MODULE_PATH}/usage`,
  operationId: 'getModuleUsage',
  summary: 'Which vines use which version of a module',
  description:
    "The namespace owner's vines whose newest succeeded PLAN or DEPLOY installed the module (as its agent " +
    'reported from `init`, `execution_metadata.modules`), from any registry host, with the version. A pull ' +
    "request's plan is passed over. Needs the viewer role in the namespace.",
  tags: ['registry'],
  auth: 'user',
  params: ModuleParams,
  responses: { 200: { description: 'The vines and their versions', schema: ModuleUsageRecord } },
});

export const deprecateModuleVersion = operation({
  method: 'post',
  path: `${MODULE_PATH}/{version}/deprecate`,
  operationId: 'deprecateModuleVersion',
  summary: 'Deprecate a module version (or undo it)',
  description:
    'A deprecated version can still be installed; the API and the CLI show it as deprecated, with the reason. ' +
    'Needs the admin role in the namespace.',
  tags: ['registry'],
  auth: 'user',
  params: ModuleVersionParams,
  body: DeprecateModuleVersionBody,
  responses: { 200: { description: 'The version', schema: RegistryModuleVersionRecord } },
});

export const deleteModuleVersion = operation({
  method: 'delete',
  path: `${MODULE_PATH}/{version}`,
  operationId: 'deleteModuleVersion',
  summary: 'Delete a module version and its tarball',
  description:
    'Configurations whose constraint only this version met can no longer `init`. Needs the admin role in the namespace.',
  tags: ['registry'],
  auth: 'user',
  params: ModuleVersionParams,
  responses: { 204: { description: 'Deleted' } },
});

export const deleteModule = operation({
  method: 'delete',
  path: MODULE_PATH,
  operationId: 'deleteModule',
  summary: 'Delete a module, every version and tarball',
  description: 'Needs the admin role in the namespace.',
  tags: ['registry'],
  auth: 'user',
  params: ModuleParams,
  responses: { 204: { description: 'Deleted' } },
});

/** In the order the API reference lists them. */
export const registryModulesOperations = {
  publishModuleVersion,
  listModules,
  listModuleVersions,
  getModuleUsage,
  deprecateModuleVersion,
  deleteModuleVersion,
  deleteModule,
};
