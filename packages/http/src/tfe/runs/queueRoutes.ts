import type { UseCases } from '@trellis/core';
import type { RequestHandler, Router } from 'express';
import { paginate, sendDocument } from '../jsonapi.js';
import { actorOf } from '../tfeAuth.js';
import * as view from './phasesViews.js';

/**
 * What the CLI asks while its run waits (issue 27): `GET /organizations/:org/runs/queue` (the
 * organization's running and queued jobs as runs, with their place) and
 * `GET /organizations/:org/capacity` (how many are queued and running).
 */
export function queueRoutes(router: Router, useCases: UseCases, authenticate: RequestHandler): void {
  const queue = useCases.tfe.runPhases.queue;
  router.get('/organizations/:org/runs/queue', authenticate, async (req, res) => {
    const runs = await queue.queue(actorOf(res), req.params.org);
    const page = paginate(runs, req.query as Record<string, unknown>);
    sendDocument(res, 200, page.items.map(view.queuedRun), { meta: page.meta });
  });
  router.get('/organizations/:org/capacity', authenticate, async (req, res) => {
    const { name, pending, running } = await queue.capacity(actorOf(res), req.params.org);
    sendDocument(res, 200, view.capacity(name, pending, running));
  });
}
