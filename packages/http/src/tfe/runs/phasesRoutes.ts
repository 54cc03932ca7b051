import type { Clock, PhaseKind, SignedUrls, UseCases } from '@trellis/core';
import express, { type Request, type RequestHandler, type Router } from 'express';
import type { FailureLimiter } from '../../limits/FailureLimiter.js';
import type { Logger } from '../../logger.js';
import { jsonApiErrorHandler, paginate, sendDocument } from '../jsonapi.js';
import { actorOf, tfeAuthenticate } from '../tfeAuth.js';
import { TFP_API_VERSION, TFP_RATE_LIMIT } from '../tfeRoutes.js';
import { logReadPath } from './logsRoutes.js';
import * as view from './phasesViews.js';
import { policyCheckRoutes } from './policyChecksRoutes.js';
import { queueRoutes } from './queueRoutes.js';

export interface RunPhaseRouteDeps {
  useCases: UseCases;
  signer: SignedUrls;
  clock: Clock;
  publicOrigin(req: Request): string;
  failures: FailureLimiter;
  logger: Logger;
  signedUrlSeconds: number;
}

/**
 * The phases of a run under `/api/v2` (issue 27): `plans/:id`, `applies/:id` (with their signed
 * `log-read-url`), `runs/:id/run-events` (none are kept: an empty list), the policy checks, the
 * organization's run queue and capacity. Mounted ahead of the rest of the API; each route
 * authenticates itself, and a path it does not know goes on to the next router.
 */
export function runPhaseRoutes(deps: RunPhaseRouteDeps): Router {
  const { useCases } = deps;
  const router = express.Router();
  const bearer = tfeAuthenticate(useCases, deps.failures);
  const authenticate: RequestHandler = (req, res, next) => {
    res.setHeader('TFP-API-Version', TFP_API_VERSION);
    res.setHeader('X-RateLimit-Limit', TFP_RATE_LIMIT);
    res.setHeader('TFP-AppName', 'Trellis');
    return bearer(req, res, next);
  };

  const phase = (kind: PhaseKind) => async (req: Request, res: express.Response) => {
    const found = await useCases.tfe.runPhases.phases.read(actorOf(res), req.params.id, kind);
    const url = deps.publicOrigin(req) + logReadPath(deps.signer, deps.clock.now(), found, deps.signedUrlSeconds);
    sendDocument(res, 200, view.phase(found, url));
  };
  router.get('/plans/:id', authenticate, phase('plan'));
  router.get('/applies/:id', authenticate, phase('apply'));
  router.get('/runs/:id/run-events', authenticate, async (req, res) => {
    await useCases.tfe.runPhases.phases.readRun(actorOf(res), req.params.id);
    sendDocument(res, 200, [], { meta: paginate([], req.query as Record<string, unknown>).meta });
  });
  policyCheckRoutes(router, useCases, authenticate);
  queueRoutes(router, useCases, authenticate);
  router.use(jsonApiErrorHandler(deps.logger));
  return router;
}
