import { IdParams, StreamQuery } from '@trellis/contract';
import type { LiveLogStreams } from '../realtime/LiveLogStreams.js';
import { defineRoute, type RouteSpec } from '../routing/route.js';

/** DESIGN §6: `GET /api/jobs/{id}/logs/stream` as Server-Sent Events, served by `LiveLogStreams`. */
export function streamRoutes(streams: LiveLogStreams, shutdown: AbortSignal): RouteSpec[] {
  return [
    defineRoute({
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
      handler: async ({ user, params, query, req, res }) => {
        const lastEventId = Number(req.headers['last-event-id']);
        const after = Number.isSafeInteger(lastEventId) && lastEventId >= 0 ? lastEventId : (query.after ?? 0);
        const disconnected = new AbortController();
        req.on('close', () => disconnected.abort());
        await streams.serve(user, params.id, after, res, AbortSignal.any([disconnected.signal, shutdown]));
        return undefined;
      },
    }),
  ];
}
