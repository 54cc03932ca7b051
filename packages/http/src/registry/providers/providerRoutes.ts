import type { UseCases } from '@trellis/core';
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
} from '@trellis/contract';
import { defineRoute, type RouteSpec } from '../../routing/route.js';

const TAGS = ['registry'];

/**
 * Trellis's API of the private registry's providers (issue 28): a version is published in two
 * steps, each of which streams: `POST` its `SHA256SUMS` and signature (checked against the
 * namespace's GPG keys at once), then one `PUT` of each zip (checked against `SHA256SUMS`). The
 * stock CLI reads them through `providers.v1` (`providerProtocolRoutes.ts`).
 */
export function providerRoutes(useCases: UseCases): RouteSpec[] {
  const providers = useCases.registryProviders;
  return [
    defineRoute({
      method: 'get',
      path: '/api/registry/providers/{namespace}',
      operationId: 'listRegistryProviders',
      summary: "A namespace's providers, by type",
      tags: TAGS,
      auth: 'user',
      params: RegistryNamespaceParams,
      query: ListRegistryProvidersQuery,
      responses: { 200: { description: 'A page of provider types', schema: RegistryProviderList } },
      handler: async ({ user, params, query }) => ({
        status: 200,
        body: await providers.list(user, params.namespace, query.limit ?? 50, query.after ?? null),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/registry/providers/{namespace}/{type}/versions',
      operationId: 'listRegistryProviderVersions',
      summary: "A provider's versions, oldest first, with the platforms their SHA256SUMS lists",
      tags: TAGS,
      auth: 'user',
      params: RegistryProviderParams,
      responses: { 200: { description: 'Every version', schema: ProviderVersionList } },
      handler: async ({ user, params }) => ({
        status: 200,
        body: { versions: await providers.versions(user, params.namespace, params.type) },
      }),
    }),
    defineRoute({
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
      handler: async ({ user, params, body }) => ({
        status: 201,
        body: await providers.publish(user, params.namespace, params.type, params.version, body),
      }),
    }),
    defineRoute({
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
      handler: async ({ user, params, req }) => ({
        status: 200,
        body: await providers.uploadPlatform(
          user,
          params.namespace,
          params.type,
          params.version,
          params.os,
          params.arch,
          req,
        ),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/registry/providers/{namespace}/{type}/versions/{version}',
      operationId: 'deleteRegistryProviderVersion',
      summary: 'Delete a provider version and its zips (admins)',
      tags: TAGS,
      auth: 'user',
      params: RegistryProviderVersionParams,
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ user, params }) => {
        await providers.deleteVersion(user, params.namespace, params.type, params.version);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/registry/gpg-keys/{namespace}',
      operationId: 'listRegistryGpgKeys',
      summary: "A namespace's GPG public keys",
      tags: TAGS,
      auth: 'user',
      params: RegistryNamespaceParams,
      responses: { 200: { description: 'Every key', schema: GpgKeyList } },
      handler: async ({ user, params }) => ({
        status: 200,
        body: { keys: await useCases.gpgKeys.list(user, params.namespace) },
      }),
    }),
    defineRoute({
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
      handler: async ({ user, params, body }) => ({
        status: 201,
        body: await useCases.gpgKeys.add(user, params.namespace, body.ascii_armor),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/registry/gpg-keys/{namespace}/{key_id}',
      operationId: 'deleteRegistryGpgKey',
      summary: 'Delete a GPG public key of a namespace (admins)',
      tags: TAGS,
      auth: 'user',
      params: GpgKeyParams,
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ user, params }) => {
        await useCases.gpgKeys.delete(user, params.namespace, params.key_id);
        return { status: 204 };
      },
    }),
  ];
}
