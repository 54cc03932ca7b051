import type { UseCases } from '@trellis/core';
import { CreatedToken, CreateTokenBody, IdParams, ListTokensQuery, TokenList } from '@trellis/contract';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS, pagedList } from '../routing/pagedList.js';
import { defineRoute, type RouteSpec } from '../routing/route.js';

/** API tokens for automation (issue 12). Made and revoked by people, not by API tokens. */
export function tokenRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
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
      handler: async ({ user, body }) => ({ status: 201, body: await useCases.apiTokens.create(user, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/tokens',
      operationId: 'listTokens',
      summary: "Your personal API tokens, or an organization's, newest first (never the secret)",
      description: PAGED_LIST_DESCRIPTION,
      tags: ['tokens'],
      auth: 'user',
      query: ListTokensQuery,
      responses: { 200: { description: 'A page of tokens', schema: TokenList, headers: PAGED_LIST_HEADERS } },
      handler: async ({ req, user, query }) => pagedList(req, 'tokens', await useCases.apiTokens.list(user, query)),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/tokens/{id}',
      operationId: 'revokeToken',
      summary: 'Revoke an API token',
      description: "Its creator may; an organization's admins may revoke the organization's tokens.",
      tags: ['tokens'],
      auth: 'user',
      params: IdParams,
      responses: { 204: { description: 'Revoked: the token no longer authenticates' } },
      handler: async ({ user, params }) => {
        await useCases.apiTokens.revoke(user, params.id);
        return { status: 204 };
      },
    }),
  ];
}
