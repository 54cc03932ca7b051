import type { Router } from 'express';
import { refusedActionPage, unconfirmed } from '../confirmation.js';
import { formField, Redirect, type WebRouteDeps } from '../routing.js';
import { refused } from '../vineyardEdits/refusal.js';

/**
 * The buttons that queue and cancel jobs (issue 29): plain forms posted here, which call the use
 * cases the API calls. Plan, deploy and drift check go at once; destroying (the vine's name typed)
 * and cancelling ask first on a page of their own. Core's refusal is shown with its code.
 */
export function jobActionRoutes(router: Router, deps: WebRouteDeps): void {
  const { useCases } = deps;
  const form = [deps.headers, ...deps.sameOriginForm];

  router.post(
    '/configurations/:id/jobs',
    ...form,
    deps.signedIn(async ({ req, user, base }) => {
      const vine = await useCases.vines.get(user, req.params.id);
      const jobType = formField(req, 'job_type');
      const planJobId = formField(req, 'plan_job_id');
      const back = planJobId
        ? { path: `/jobs/${planJobId}`, label: 'Back to the plan' }
        : { path: `/configurations/${vine.id}`, label: `Back to ${vine.name}` };
      if (jobType === 'DESTROY') {
        const ask = unconfirmed(req, base, {
          title: `Destroy ${vine.name}`,
          question: `Destroy every resource of ${vine.name}${planJobId ? ' with this plan' : ''}? This cannot be undone.`,
          button: 'Destroy',
          back: back.path,
          section: 'vineyards',
          typeName: vine.name,
        });
        if (ask) return ask;
      }
      const result = await refused(() =>
        useCases.jobs.create(user, {
          job_type: jobType,
          configuration_id: vine.id,
          ...(planJobId ? { plan_job_id: planJobId } : {}),
          ...(formField(req, 'destroy') === 'true' ? { destroy: true } : {}),
        }),
      );
      if ('done' in result) return new Redirect(`/jobs/${result.done.id}`);
      return refusedActionPage({ title: 'Not queued', refusal: result.refusal, back, base, section: 'vineyards' });
    }),
  );

  router.post(
    '/configurations/:id/drift-check',
    ...form,
    deps.signedIn(async ({ req, user, base }) => {
      const vine = await useCases.vines.get(user, req.params.id);
      const result = await refused(() => useCases.drift.checkNow(user, vine.id));
      if ('done' in result) return new Redirect(`/jobs/${result.done.id}`);
      const back = { path: `/configurations/${vine.id}`, label: `Back to ${vine.name}` };
      return refusedActionPage({ title: 'No drift check', refusal: result.refusal, back, base, section: 'vineyards' });
    }),
  );

  router.post(
    '/jobs/:id/cancel',
    ...form,
    deps.signedIn(async ({ req, user, base }) => {
      const job = await useCases.jobs.get(user, req.params.id);
      const back = { path: `/jobs/${job.id}`, label: 'Back to the job' };
      const ask = unconfirmed(req, base, {
        title: 'Cancel the job',
        question: 'Cancel this job? A running engine is interrupted.',
        button: 'Cancel job',
        back: back.path,
        section: 'jobs',
      });
      if (ask) return ask;
      const result = await refused(() => useCases.jobs.cancel(user, job.id));
      if ('done' in result) return new Redirect(`/jobs/${job.id}`);
      return refusedActionPage({ title: 'Not cancelled', refusal: result.refusal, back, base, section: 'jobs' });
    }),
  );
}
