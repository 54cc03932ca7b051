/** API tokens: each operation as data (served by `http/src/tokens/tokenRoutes.ts`). */
import { operation } from '../operation.js';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS } from '../paging.js';
import { CreateTokenBody, CreatedToken, IdParams, ListTokensQuery, TokenList } from '../schemas.js';

export const createToken = operation({
  method: 'post',
  path: '/api/tokens',
  operationId: 'createToken',
  summary: 'Create an API token',
  description:
    'A personal token acts as you; an organization token (`org_id`, needs the admin role) acts only ' +
    "within that organization with its role, never above its creator's. The token is in this answer only.",
  tags: ['tokens'],
  auth: 'user',
  body: CreateTokenBody,
  responses: { 201: { description: 'The token, shown only once', schema: CreatedToken } },
});

export const listTokens = operation({
  method: 'get',
  path: '/api/tokens',
  operationId: 'listTokens',
  summary: "Your personal API tokens, or an organization's, newest first (never the secret)",
  description: PAGED_LIST_DESCRIPTION,
  tags: ['tokens'],
  auth: 'user',
  query: ListTokensQuery,
  responses: { 200: { description: 'A page of tokens', schema: TokenList, headers: PAGED_LIST_HEADERS } },
});

export const revokeToken = operation({
  method: 'delete',
  path: '/api/tokens/{id}',
  operationId: 'revokeToken',
  summary: 'Revoke an API token',
  description: "Its creator may; an organization's admins may revoke the organization's tokens.",
  tags: ['tokens'],
  auth: 'user',
  params: IdParams,
  responses: { 204: { description: 'Revoked: the token no longer authenticates' } },
});

/** In the order the API reference lists them. */
export const tokensOperations = { createToken, listTokens, revokeToken };
