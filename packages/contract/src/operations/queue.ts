/** The job queue: each operation as data (served by `http/src/queue/queueRoutes.ts`). */
import { operation } from '../operation.js';
import { JobQueue, QueueQuery } from '../schemas.js';

export const getJobQueue = operation({
  method: 'get',
  path: '/api/cli/queue',
  operationId: 'getJobQueue',
  summary: 'Queued jobs in the order agents claim them, with the agent pool that can take each',
  description:
    "The queued jobs the caller may read, each with its `position` in its owner's queue (1 is what the owner's next claim takes; the order is the claim's own: a DEPLOY of a plan at its plan's place, the jobs of one configuration one at a time in the order they were queued), how long it has waited, its configuration and vineyard, the agent pool that can take it (the owner's own agents or the organization's pool, an assigned agent, the agent a DESTROY_WORKER destroys left out) with how many of its agents are online and idle, and `waiting_for`: why it waits. Not cursor-paged (positions move with every claim): `limit` jobs from the head, and `total`.",
  tags: ['jobs'],
  auth: 'user',
  query: QueueQuery,
  responses: { 200: { description: 'The head of the queue', schema: JobQueue } },
});

/** In the order the API reference lists them. */
export const queueOperations = { getJobQueue };
