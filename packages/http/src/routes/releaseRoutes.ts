import type { UseCases } from '@trellis/core';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS, pagedList } from '../routing/pagedList.js';
import { defineRoute, type RouteSpec } from '../routing/route.js';
import {
  PageQuery,
  PublishReleaseBody,
  RegistrationResponse,
  Release,
  ReleaseList,
  TendrilBody,
} from '@trellis/contract';

/** CI-only endpoints (SPEC §4.4), behind `Authorization: Bearer <RELEASE_API_SECRET>`. */
export function releaseRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/releases/worker',
      operationId: 'publishWorkerRelease',
      summary: 'Publish an agent release',
      tags: ['releases'],
      auth: 'release',
      body: PublishReleaseBody,
      responses: { 201: { description: 'The release', schema: Release } },
      handler: async ({ body }) => ({ status: 201, body: await useCases.releases.publish(body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/releases/worker',
      operationId: 'listWorkerReleases',
      summary: 'Published agent releases, newest first',
      description: PAGED_LIST_DESCRIPTION,
      tags: ['releases'],
      auth: 'user',
      query: PageQuery,
      responses: {
        200: {
          description: 'A page of releases',
          schema: ReleaseList,
          headers: PAGED_LIST_HEADERS,
        },
      },
      handler: async ({ req, query }) => pagedList(req, 'releases', await useCases.releases.list(query)),
    }),
    defineRoute({
      method: 'post',
      path: '/api/tendrils/register',
      operationId: 'registerTendril',
      summary: 'Register a cloud-hosted agent for a user',
      description: 'Used by the infrastructure-as-code run that deploys the agent. The token is returned only once.',
      tags: ['releases'],
      auth: 'release',
      body: TendrilBody,
      responses: { 201: { description: 'Credentials of the new agent', schema: RegistrationResponse } },
      handler: async ({ body }) => ({ status: 201, body: await useCases.workers.registerTendril(body) }),
    }),
  ];
}
