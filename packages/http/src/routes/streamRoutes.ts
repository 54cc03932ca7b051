import { type EventBus, isTerminalJobStatus, type JobStatus, type UseCases } from '@trellis/core';
import { z } from 'zod';
import { EventLatch } from '../realtime/waitForEvent.js';
import { defineRoute, type RouteSpec } from '../routing/route.js';
import { IdParams } from '../routing/schemas.js';

/** Re-read even without an event (events are best effort), and keep proxies from idling out. */
const RECHECK_MS = 5000;
const KEEPALIVE_MS = 15_000;
const PAGE = 1000;

const StreamQuery = z.object({
  after: z.coerce.number().int().min(0).optional().describe('resume after this chunk id (or send Last-Event-ID)'),
});

/**
 * DESIGN §6: `GET /api/jobs/{id}/logs/stream` as Server-Sent Events. It subscribes before it
 * reads, then after every wake-up reads from the last id it sent, so no chunk is missed or sent
 * twice, and a client reconnecting with `Last-Event-ID` resumes exactly where it stopped.
 */
export function streamRoutes(useCases: UseCases, events: EventBus, shutdown: AbortSignal): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/jobs/{id}/logs/stream',
      operationId: 'streamJobLogs',
      summary: 'Follow the log of a job live (Server-Sent Events)',
      description:
        'Events: `log` (data: a log entry; `id:` is the chunk id), `status` (data: `{status, error_message}`) on every status change, and `end` once the job is finished and every chunk was sent.',
      tags: ['jobs'],
      auth: 'user',
      params: IdParams,
      query: StreamQuery,
      responses: { 200: { description: 'An event stream', contentType: 'text/event-stream' } },
      handler: async ({ user, params, query, req, res }) => {
        let job = await useCases.jobs.get(user, params.id);
        const lastEventId = Number(req.headers['last-event-id']);
        let lastId = Number.isSafeInteger(lastEventId) && lastEventId >= 0 ? lastEventId : (query.after ?? 0);

        const disconnected = new AbortController();
        req.on('close', () => disconnected.abort());
        const closed = { signal: AbortSignal.any([disconnected.signal, shutdown]) };
        const latch = new EventLatch(events, (event) => event.job_id === params.id && event.type !== 'job_queued');
        res.status(200);
        res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
        res.setHeader('Cache-Control', 'no-cache, no-transform');
        res.setHeader('X-Accel-Buffering', 'no');
        res.flushHeaders();
        const send = (event: string, data: unknown, id?: number) => {
          res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        };
        const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
        let sentStatus: JobStatus | null = null;
        try {
          while (!closed.signal.aborted) {
            let page: Awaited<ReturnType<typeof useCases.logs.read>>;
            do {
              page = await useCases.logs.read(user.userId, params.id, { after: lastId, limit: PAGE });
              for (const chunk of page.logs) {
                send('log', chunk, chunk.id);
                lastId = chunk.id;
              }
            } while (page.has_more && !closed.signal.aborted);
            if (job.status !== sentStatus) {
              send('status', { status: job.status, error_message: job.error_message });
              sentStatus = job.status;
            }
            if (isTerminalJobStatus(job.status)) {
              // The status was read before the last log page, so every chunk stored before the
              // job ended has been sent.
              send('end', { status: job.status }, lastId);
              break;
            }
            await latch.next(RECHECK_MS, closed.signal);
            job = await useCases.jobs.get(user, params.id);
          }
        } finally {
          clearInterval(keepalive);
          latch.close();
          res.end();
        }
        return undefined;
      },
    }),
  ];
}
