import type { UseCases } from '@trellis/core';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** Trellis as an OpenID Connect issuer of job tokens (issue 16): public, cacheable for a few minutes. */
export function oidcRoutes(useCases: UseCases): RouteSpec[] {
  const cache = { 'Cache-Control': 'public, max-age=300' };
  return [
    implement(operations.openIdConfiguration, async () => ({
      status: 200,
      body: useCases.workloadIdentity.discovery(),
      headers: cache,
    })),
    implement(operations.jsonWebKeySet, async () => ({
      status: 200,
      body: await useCases.workloadIdentity.jwks(),
      headers: cache,
    })),
  ];
}
