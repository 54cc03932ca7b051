import { DomainError, type JobListQuery, RateLimitedError, type UseCases, type UserActor } from '@trellis/core';
import type { Request, RequestHandler, Response, Router } from 'express';
import type { WebRouteDeps } from '../routing.js';
import { isJobListView } from './jobLists.js';
import type { LiveLists } from './LiveLists.js';
import { VINE_PAGE_JOBS } from '../pages/vinePage.js';
import { queueList } from '../queue/queuePage.js';
import { fleetLive } from '../fleet/fleetPage.js';
import { fleetFilters } from '../fleet/fleetRoutes.js';
import { orgFilterOf, Standing } from '../standing.js';

export interface LiveRouteDeps {
  useCases: UseCases;
  liveLists: LiveLists;
  headers: RequestHandler;
  orgsOf: WebRouteDeps['orgsOf'];
  currentUser(req: Request, res: Response): UserActor | null;
  /** Aborts on shutdown: every stream ends, so the server can close. */
  shutdown: AbortSignal;
  onError?: (error: unknown, req: Request) => void;
  now: () => Date;
}

/** The filters a list's stream takes, as its page's query gave them (core checks them). */
const FILTERS = ['status', 'vineyard_id', 'vine_id', 'org_id'] as const;

/**
 * `GET /live/jobs?view=jobs|vine&…filters` (issue 29): the rows of a job list as Server-Sent
 * Events of HTML, for htmx's SSE extension on the list's page (`liveJobList`). A stream for the
 * signed-in person only: a request without a session is answered 401, never redirected (an
 * EventSource cannot follow a sign-in).
 */
export function liveRoutes(router: Router, deps: LiveRouteDeps): void {
  router.get('/live/jobs', deps.headers, async (req, res) => {
    const user = deps.currentUser(req, res);
    if (!user) return refuse(res, 401, 'sign in to follow a list');
    const view = req.query.view;
    if (!isJobListView(view)) return refuse(res, 400, 'view must be jobs or vine');
    const query: JobListQuery = {};
    for (const name of FILTERS) {
      const value = req.query[name];
      if (typeof value === 'string') query[name] = value;
    }
    if (view === 'vine' && query.vine_id === undefined) return refuse(res, 400, 'a vine list needs vine_id');
    const limit = view === 'vine' ? VINE_PAGE_JOBS : req.query.limit;
    await serveStream(req, res, deps, async (closed) => {
      const orgs = await deps.orgsOf(user);
      await deps.liveLists.serve(
        user,
        orgs.map((org) => org.id),
        { view, query, limit, base: req.baseUrl },
        res,
        closed,
      );
    });
  });

  /**
   * `GET /live/queue?org_id=&limit=`: the queue page's list, sent whole when a job the person may
   * see is queued, starts or ends (every position may change then).
   */
  router.get('/live/queue', deps.headers, async (req, res) => {
    const user = deps.currentUser(req, res);
    if (!user) return refuse(res, 401, 'sign in to follow a list');
    const orgFilter = orgFilterOf(req.query.org_id);
    const limit = req.query.limit;
    await serveStream(req, res, deps, async (closed) => {
      const orgs = await deps.orgsOf(user);
      const standing = new Standing(user.userId, orgs);
      const read = async () =>
        queueList(req.baseUrl, await deps.useCases.queue.list(user, { org_id: orgFilter, limit }), standing);
      const key = `queue ${orgFilter} ${typeof limit === 'string' ? limit : ''}`;
      await deps.liveLists.serveWhole(
        user,
        orgs.map((org) => org.id),
        { key, read },
        res,
        closed,
      );
    });
  });

  fleetRoute(router, deps);
}

/**
 * `GET /live/fleet?…filters&limit=`: the fleet's configurations and counts, sent whole when a job
 * the person may see is queued, starts or ends (a vine's status moves with its jobs).
 */
function fleetRoute(router: Router, deps: LiveRouteDeps): void {
  router.get('/live/fleet', deps.headers, async (req, res) => {
    const user = deps.currentUser(req, res);
    if (!user) return refuse(res, 401, 'sign in to follow a list');
    const filters = fleetFilters(req);
    const query = { ...filters, org_id: filters.org_id === '' ? undefined : filters.org_id };
    const limit = req.query.limit;
    await serveStream(req, res, deps, async (closed) => {
      const orgs = await deps.orgsOf(user);
      const standing = new Standing(user.userId, orgs);
      const read = async () => {
        const [vines, counts] = await Promise.all([
          deps.useCases.vines.list(user, { ...query, limit }),
          deps.useCases.vines.counts(user, query),
        ]);
        return fleetLive({ base: req.baseUrl, filters, vines: vines.items, counts, standing, now: deps.now() });
      };
      const key = `fleet ${new URLSearchParams({ ...filters, limit: typeof limit === 'string' ? limit : '' } as Record<string, string>)}`;
      await deps.liveLists.serveWhole(
        user,
        orgs.map((org) => org.id),
        { key, read },
        res,
        closed,
      );
    });
  });
}

function refuse(res: Response, status: number, message: string): void {
  res.status(status).type('text/plain; charset=utf-8').send(message);
}

/** Serves a stream until its client goes or the server shuts down; a refusal before it opens is answered. */
async function serveStream(
  req: Request,
  res: Response,
  deps: LiveRouteDeps,
  serve: (closed: AbortSignal) => Promise<void>,
): Promise<void> {
  const disconnected = new AbortController();
  res.on('close', () => disconnected.abort());
  try {
    await serve(AbortSignal.any([disconnected.signal, deps.shutdown]));
  } catch (error) {
    if (res.headersSent) return;
    if (error instanceof RateLimitedError) {
      res.setHeader('Retry-After', String(error.retryAfterSeconds));
      return refuse(res, 429, error.message);
    }
    if (error instanceof DomainError && error.kind === 'validation') return refuse(res, 400, error.message);
    if (!(error instanceof DomainError)) deps.onError?.(error, req);
    refuse(res, 500, 'the list could not be followed');
  }
}
