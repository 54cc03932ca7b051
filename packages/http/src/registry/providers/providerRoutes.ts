import type { UseCases } from '@trellis/core';
import { implement, type RouteSpec } from '../../routing/route.js';
import { operations } from '@trellis/contract';

/**
 * Trellis's API of the private registry's providers (issue 28): a version is published in two
 * steps, each of which streams: `POST` its `SHA256SUMS` and signature (checked against the
 * namespace's GPG keys at once), then one `PUT` of each zip (checked against `SHA256SUMS`). The
 * stock CLI reads them through `providers.v1` (`providerProtocolRoutes.ts`).
 */
export function providerRoutes(useCases: UseCases): RouteSpec[] {
  const providers = useCases.registryProviders;
  return [
    implement(operations.listRegistryProviders, async ({ user, params, query }) => ({
      status: 200,
      body: await providers.list(user, params.namespace, query.limit ?? 50, query.after ?? null),
    })),
    implement(operations.listRegistryProviderVersions, async ({ user, params }) => ({
      status: 200,
      body: { versions: await providers.versions(user, params.namespace, params.type) },
    })),
    implement(operations.publishRegistryProviderVersion, async ({ user, params, body }) => ({
      status: 201,
      body: await providers.publish(user, params.namespace, params.type, params.version, body),
    })),
    implement(operations.uploadRegistryProviderPlatform, async ({ user, params, req }) => ({
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
    })),
    implement(operations.deleteRegistryProviderVersion, async ({ user, params }) => {
      await providers.deleteVersion(user, params.namespace, params.type, params.version);
      return { status: 204 };
    }),
    implement(operations.listRegistryGpgKeys, async ({ user, params }) => ({
      status: 200,
      body: { keys: await useCases.gpgKeys.list(user, params.namespace) },
    })),
    implement(operations.addRegistryGpgKey, async ({ user, params, body }) => ({
      status: 201,
      body: await useCases.gpgKeys.add(user, params.namespace, body.ascii_armor),
    })),
    implement(operations.deleteRegistryGpgKey, async ({ user, params }) => {
      await useCases.gpgKeys.delete(user, params.namespace, params.key_id);
      return { status: 204 };
    }),
  ];
}
