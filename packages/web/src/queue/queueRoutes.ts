import type { Router } from 'express';
import type { WebRouteDeps } from '../routing.js';
import { orgFilterOf } from '../standing.js';
import { queuePage } from './queuePage.js';

/**
 * `GET /queue` (issue 29): the queued jobs in the order agents claim them; with `live`, the list
 * follows `GET /live/queue`.
 */
export function queueRoutes(router: Router, deps: WebRouteDeps): void {
  const { useCases, headers, signedIn } = deps;
  router.get(
    '/queue',
    headers,
    signedIn(async ({ req, user, base, standing }) => {
      const orgFilter = orgFilterOf(req.query.org_id);
      const queue = await useCases.queue.list(user, { org_id: orgFilter, limit: req.query.limit });
      const query = new URLSearchParams();
      if (orgFilter !== '') query.set('org_id', orgFilter);
      if (typeof req.query.limit === 'string') query.set('limit', req.query.limit);
      const live = deps.live ? `${base}/live/queue${query.size > 0 ? `?${query}` : ''}` : null;
      return queuePage({ base, queue, standing: await standing(), orgFilter, live });
    }),
  );
}
