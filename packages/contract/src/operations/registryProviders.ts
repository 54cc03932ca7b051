/** The private registry's providers and signing keys: each operation as data (served by `http/src/registry/providers/providerRoutes.ts`). */
import { operation } from '../operation.js';
import {
  AddGpgKeyBody,
  GpgKeyList,
  GpgKeyParams,
  GpgKeyRecord,
  ListRegistryProvidersQuery,
  ProviderVersionList,
  ProviderVersionRecord,
  PublishProviderVersionBody,
  RegistryNamespaceParams,
  RegistryProviderList,
  RegistryProviderParams,
  RegistryProviderPlatformParams,
  RegistryProviderVersionParams,
} from '../schemas.js';

const TAGS = ['registry'];

export const listRegistryProviders = operation({
  method: 'get',
  path: '/api/registry/providers/{namespace}',
  operationId: 'listRegistryProviders',
  summary: "A namespace's providers, by type",
  tags: TAGS,
  auth: 'user',
  params: RegistryNamespaceParams,
  query: ListRegistryProvidersQuery,
  responses: { 200: { description: 'A page of provider types', schema: RegistryProviderList } },
});

export const listRegistryProviderVersions = operation({
  method: 'get',
  path: '/api/registry/providers/{namespace}/{type}/versions',
  operationId: 'listRegistryProviderVersions',
  summary: "A provider's versions, oldest first, with the platforms their SHA256SUMS lists",
  tags: TAGS,
  auth: 'user',
  params: RegistryProviderParams,
  responses: { 200: { description: 'Every version', schema: ProviderVersionList } },
});

export const publishRegistryProviderVersion = operation({
  method: 'post',
  path: '/api/registry/providers/{namespace}/{type}/versions/{version}',
  operationId: 'publishRegistryProviderVersion',
  summary: 'Publish a provider version: its SHA256SUMS and their signature (operators)',
  description:
    "The signature must be made by one of the namespace's GPG keys (`422 provider_signature_invalid`); " +
    'a version never changes (`409 provider_version_exists`). Then `PUT` each zip SHA256SUMS lists.',
  tags: TAGS,
  auth: 'user',
  params: RegistryProviderVersionParams,
  body: PublishProviderVersionBody,
  bodyLimit: 256 * 1024,
  responses: { 201: { description: 'Published, no zip uploaded yet', schema: ProviderVersionRecord } },
});

export const uploadRegistryProviderPlatform = operation({
  method: 'put',
  path: '/api/registry/providers/{namespace}/{type}/versions/{version}/platforms/{os}/{arch}',
  operationId: 'uploadRegistryProviderPlatform',
  summary: "Upload one platform's zip of a published version (operators)",
  description:
    'The body is `terraform-provider-<type>_<version>_<os>_<arch>.zip`, streamed to the artifact store; ' +
    'kept only when its sha256 is the one SHA256SUMS lists (`422 provider_shasum_mismatch`).',
  tags: TAGS,
  auth: 'user',
  params: RegistryProviderPlatformParams,
  body: 'binary',
  responses: {
    200: { description: 'Uploaded', schema: ProviderVersionRecord },
    413: { description: 'Over `TRELLIS_REGISTRY_PROVIDER_MAX_BYTES` (`provider_zip_too_large`)' },
  },
});

export const deleteRegistryProviderVersion = operation({
  method: 'delete',
  path: '/api/registry/providers/{namespace}/{type}/versions/{version}',
  operationId: 'deleteRegistryProviderVersion',
  summary: 'Delete a provider version and its zips (admins)',
  tags: TAGS,
  auth: 'user',
  params: RegistryProviderVersionParams,
  responses: { 204: { description: 'Deleted' } },
});

export const listRegistryGpgKeys = operation({
  method: 'get',
  path: '/api/registry/gpg-keys/{namespace}',
  operationId: 'listRegistryGpgKeys',
  summary: "A namespace's GPG public keys",
  tags: TAGS,
  auth: 'user',
  params: RegistryNamespaceParams,
  responses: { 200: { description: 'Every key', schema: GpgKeyList } },
});

export const addRegistryGpgKey = operation({
  method: 'post',
  path: '/api/registry/gpg-keys/{namespace}',
  operationId: 'addRegistryGpgKey',
  summary: 'Add a GPG public key to a namespace (admins)',
  description: 'Its id is read from the key (`400 gpg_key_invalid` for text that is not one public key).',
  tags: TAGS,
  auth: 'user',
  params: RegistryNamespaceParams,
  body: AddGpgKeyBody,
  bodyLimit: 128 * 1024,
  responses: { 201: { description: 'Added', schema: GpgKeyRecord } },
});

export const deleteRegistryGpgKey = operation({
  method: 'delete',
  path: '/api/registry/gpg-keys/{namespace}/{key_id}',
  operationId: 'deleteRegistryGpgKey',
  summary: 'Delete a GPG public key of a namespace (admins)',
  tags: TAGS,
  auth: 'user',
  params: GpgKeyParams,
  responses: { 204: { description: 'Deleted' } },
});

/** In the order the API reference lists them. */
export const registryProvidersOperations = {
  listRegistryProviders,
  listRegistryProviderVersions,
  publishRegistryProviderVersion,
  uploadRegistryProviderPlatform,
  deleteRegistryProviderVersion,
  listRegistryGpgKeys,
  addRegistryGpgKey,
  deleteRegistryGpgKey,
};
