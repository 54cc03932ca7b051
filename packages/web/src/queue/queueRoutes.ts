import type { Router } from 'express';
import type { WebRouteDeps } from '../routing.js';
import { orgFilterOf } from '../standing.js';
import { queuePage } from './queuePage.js';

/** `GET /queue` (issue 29): the queued jobs in the order agents claim them. */
export function queueRoutes(router: Router, deps: WebRouteDeps): void {
  const { useCases, headers, signedIn } = deps;
  router.get(
    '/queue',
    headers,
    signedIn(async ({ req, user, base, standing }) => {
      const orgFilter = orgFilterOf(req.query.org_id);
      const queue = await useCases.queue.list(user, { org_id: orgFilter, limit: req.query.limit });
      return queuePage({ base, queue, standing: await standing(), orgFilter });
    }),
  );
}
