/** Workload identity: the OpenID discovery document and keys: each operation as data (served by `http/src/workloadIdentity/oidcRoutes.ts`). */
import { operation } from '../operation.js';
import { JsonWebKeySet, OpenIdConfiguration } from '../schemas.js';

export const openIdConfiguration = operation({
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
});

export const jsonWebKeySet = operation({
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
});

/** In the order the API reference lists them. */
export const oidcOperations = { openIdConfiguration, jsonWebKeySet };
