import type { UseCases } from '@trellis/core';
import { JsonWebKeySet, OpenIdConfiguration } from '@trellis/contract';
import { defineRoute, type RouteSpec } from '../routing/route.js';

/** Trellis as an OpenID Connect issuer of job tokens (issue 16): public, cacheable for a few minutes. */
export function oidcRoutes(useCases: UseCases): RouteSpec[] {
  const cache = { 'Cache-Control': 'public, max-age=300' };
  return [
    defineRoute({
      method: 'get',
      path: '/.well-known/openid-configuration',
      operationId: 'openIdConfiguration',
      summary: "The OIDC discovery document of the job tokens' issuer",
      description:
        'Clouds (AWS IAM OIDC providers, Google Cloud workload identity pools, Azure federated credentials) read it to find the signing keys. The issuer is TRELLIS_OIDC_ISSUER (default: the public URL).',
      tags: ['oidc'],
      auth: 'none',
      rateLimit: { windowSeconds: 60, limit: 300 },
      responses: { 200: { description: 'The discovery document', schema: OpenIdConfiguration } },
      handler: async () => ({ status: 200, body: useCases.workloadIdentity.discovery(), headers: cache }),
    }),
    defineRoute({
      method: 'get',
      path: '/.well-known/jwks.json',
      operationId: 'jsonWebKeySet',
      summary: 'The public keys that verify job tokens',
      description:
        'The signing key and, after a rotation, the previous ones until every token they signed has expired. Private keys never leave the server.',
      tags: ['oidc'],
      auth: 'none',
      rateLimit: { windowSeconds: 60, limit: 300 },
      responses: { 200: { description: 'The JWKS', schema: JsonWebKeySet } },
      handler: async () => ({ status: 200, body: await useCases.workloadIdentity.jwks(), headers: cache }),
    }),
  ];
}
