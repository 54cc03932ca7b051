import { type EventBus, isTerminalJobStatus, type JobStatus, type UseCases } from '@trellis/core';
import { z } from 'zod';
import { type JobUpdate, JobLogHub } from '../realtime/JobLogHub.js';
import { defineRoute, type RouteSpec } from '../routing/route.js';
import { IdParams } from '../routing/schemas.js';

/** Keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;
const PAGE = 1000;

const StreamQuery = z.object({
  after: z.coerce.number().int().min(0).optional().describe('resume after this chunk id (or send Last-Event-ID)'),
});

/**
 * DESIGN §6: `GET /api/jobs/{id}/logs/stream` as Server-Sent Events. A stream follows the job
 * through the process's `JobLogHub` before it reads its backlog, and sends a chunk only when its
 * id is past the last one sent, so no chunk is missed or sent twice, and a client reconnecting
 * with `Last-Event-ID` resumes exactly where it stopped.
 */
export function streamRoutes(useCases: UseCases, events: EventBus, shutdown: AbortSignal): RouteSpec[] {
  const hub = new JobLogHub(useCases, events);
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
        const lastEventId = Number(req.headers['last-event-id']);
        let lastSent = Number.isSafeInteger(lastEventId) && lastEventId >= 0 ? lastEventId : (query.after ?? 0);
        const disconnected = new AbortController();
        req.on('close', () => disconnected.abort());
        const closed = AbortSignal.any([disconnected.signal, shutdown]);

        // Follow before reading, so nothing that happens from now on can be missed; updates wait
        // in `pending` until the backlog is out.
        let pending: JobUpdate[] | null = [];
        let sentStatus: JobStatus | null = null;
        let ended = false;
        let finish: () => void = () => {};
        const done = new Promise<void>((resolve) => {
          finish = resolve;
        });
        const send = (event: string, data: unknown, id?: number) => {
          res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        };
        const deliver = (update: JobUpdate) => {
          if (ended) return;
          for (const chunk of update.chunks) {
            if (chunk.id <= lastSent) continue;
            send('log', chunk, chunk.id);
            lastSent = chunk.id;
          }
          if (update.job && update.job.status !== sentStatus) {
            sentStatus = update.job.status;
            send('status', { status: update.job.status, error_message: update.job.error_message });
          }
          if (update.job && isTerminalJobStatus(update.job.status)) {
            send('end', { status: update.job.status }, lastSent);
            ended = true;
            finish();
          }
        };
        const unfollow = hub.follow(user.userId, params.id, (update) => {
          if (pending) pending.push(update);
          else deliver(update);
        });
        try {
          const job = await useCases.jobs.get(user, params.id);
          res.status(200);
          res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
          res.setHeader('Cache-Control', 'no-cache, no-transform');
          res.setHeader('X-Accel-Buffering', 'no');
          res.flushHeaders();
          let page: Awaited<ReturnType<typeof useCases.logs.read>>;
          do {
            page = await useCases.logs.read(user.userId, params.id, { after: lastSent, limit: PAGE });
            deliver({ chunks: page.logs, job: null });
          } while (page.has_more && !closed.aborted);
          hub.backlogRead(params.id, lastSent);
          // The job was read before the backlog: if it had ended, every chunk is out by now.
          deliver({ chunks: [], job });
          const queued = pending;
          pending = null;
          for (const update of queued) deliver(update);
          const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
          closed.addEventListener('abort', finish, { once: true });
          if (closed.aborted) finish();
          await done;
          clearInterval(keepalive);
        } finally {
          unfollow();
          // Before the headers went out (the job is not the caller's), the error becomes a problem.
          if (res.headersSent) res.end();
        }
        return undefined;
      },
    }),
  ];
}
