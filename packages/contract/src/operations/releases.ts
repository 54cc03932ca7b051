/** Agent releases and tendrils: each operation as data (served by `http/src/routes/releaseRoutes.ts`). */
import { operation } from '../operation.js';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS } from '../paging.js';
import { PageQuery, PublishReleaseBody, RegistrationResponse, Release, ReleaseList, TendrilBody } from '../schemas.js';

export const publishWorkerRelease = operation({
  method: 'post',
  path: '/api/releases/worker',
  operationId: 'publishWorkerRelease',
  summary: 'Publish an agent release',
  tags: ['releases'],
  auth: 'release',
  body: PublishReleaseBody,
  responses: { 201: { description: 'The release', schema: Release } },
});

export const listWorkerReleases = operation({
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
});

export const registerTendril = operation({
  method: 'post',
  path: '/api/tendrils/register',
  operationId: 'registerTendril',
  summary: 'Register a cloud-hosted agent for a user',
  description: 'Used by the infrastructure-as-code run that deploys the agent. The token is returned only once.',
  tags: ['releases'],
  auth: 'release',
  body: TendrilBody,
  responses: { 201: { description: 'Credentials of the new agent', schema: RegistrationResponse } },
});

/** In the order the API reference lists them. */
export const releasesOperations = { publishWorkerRelease, listWorkerReleases, registerTendril };
