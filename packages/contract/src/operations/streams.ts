/** A job's live log: each operation as data (served by `http/src/routes/streamRoutes.ts`). */
import { operation } from '../operation.js';
import { IdParams, StreamQuery } from '../schemas.js';

export const streamJobLogs = operation({
  method: 'get',
  path: '/api/jobs/{id}/logs/stream',
  operationId: 'streamJobLogs',
  summary: 'Follow the log of a job live (Server-Sent Events)',
  description:
    'Events: `log` (data: a log entry; `id:` is the chunk id), `status` (data: `{status, error_message}`) on every status change, and `end` once the job is finished and every chunk was sent. A client that falls more than the stream buffer behind is disconnected without `end`: it resumes with `Last-Event-ID` (or `after`). Open streams are capped per user and per job (`429 too_many_streams` with `Retry-After`).',
  tags: ['jobs'],
  auth: 'user',
  params: IdParams,
  query: StreamQuery,
  responses: {
    200: { description: 'An event stream', contentType: 'text/event-stream' },
    429: { description: 'Too many live log streams open (`too_many_streams`); retry after `Retry-After`' },
  },
});

/** In the order the API reference lists them. */
export const streamsOperations = { streamJobLogs };
