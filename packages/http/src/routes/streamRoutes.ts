import type { LiveLogStreams } from '../realtime/LiveLogStreams.js';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** DESIGN §6: `GET /api/jobs/{id}/logs/stream` as Server-Sent Events, served by `LiveLogStreams`. */
export function streamRoutes(streams: LiveLogStreams, shutdown: AbortSignal): RouteSpec[] {
  return [
    implement(operations.streamJobLogs, async ({ user, params, query, req, res }) => {
      const lastEventId = Number(req.headers['last-event-id']);
      const after = Number.isSafeInteger(lastEventId) && lastEventId >= 0 ? lastEventId : (query.after ?? 0);
      const disconnected = new AbortController();
      req.on('close', () => disconnected.abort());
      await streams.serve(user, params.id, after, res, AbortSignal.any([disconnected.signal, shutdown]));
      return undefined;
    }),
  ];
}
