import { runId, type UseCases } from '@trellis/core';
import type { RequestHandler, Router } from 'express';
import { paginate, sendDocument } from '../jsonapi.js';
import { actorOf } from '../tfeAuth.js';
import * as view from './phasesViews.js';

/**
 * A run's policy checks (issue 27): `GET /runs/:id/policy-checks`, `GET /policy-checks/:id`, its
 * `output` (the text the CLI prints under "Organization Policy Check:") and
 * `POST /policy-checks/:id/actions/override` (Trellis's override: admins, audited).
 */
export function policyCheckRoutes(router: Router, useCases: UseCases, authenticate: RequestHandler): void {
  const checks = useCases.tfe.runPhases.policyChecks;
  router.get('/runs/:id/policy-checks', authenticate, async (req, res) => {
    const all = await checks.list(actorOf(res), req.params.id);
    const page = paginate(all, req.query as Record<string, unknown>);
    sendDocument(
      res,
      200,
      page.items.map((check) => view.policyCheck(check, runId(check.planJobId))),
      { meta: page.meta },
    );
  });
  router.get('/policy-checks/:id', authenticate, async (req, res) => {
    const check = await checks.read(actorOf(res), req.params.id);
    sendDocument(res, 200, view.policyCheck(check, runId(check.planJobId)));
  });
  router.get('/policy-checks/:id/output', authenticate, async (req, res) => {
    const text = await checks.output(actorOf(res), req.params.id);
    res.status(200).type('text/plain; charset=utf-8').setHeader('Cache-Control', 'no-store');
    res.send(text);
  });
  router.post('/policy-checks/:id/actions/override', authenticate, async (req, res) => {
    const check = await checks.override(actorOf(res), req.params.id);
    sendDocument(res, 200, view.policyCheck(check, runId(check.planJobId)));
  });
}
