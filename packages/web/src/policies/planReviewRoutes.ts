import type { Router } from 'express';
import { refusedActionPage } from '../confirmation.js';
import { formField, Redirect, type WebRouteDeps } from '../routing.js';
import { refused } from '../vineyardEdits/refusal.js';

const TITLES = { approve: 'Not approved', reject: 'Not rejected', override: 'Not overridden' } as const;

/**
 * A plan's review on its job page (issue 15, issue 29): approve, reject and override are plain
 * forms posted here, which call the use cases `POST /api/cli/jobs/{id}/approve|reject|override`
 * call; then the job page again with the decision. Core's refusal is shown with its code.
 */
export function planReviewRoutes(router: Router, deps: WebRouteDeps): void {
  const { useCases } = deps;
  for (const action of ['approve', 'reject', 'override'] as const) {
    router.post(
      `/jobs/:id/${action}`,
      deps.headers,
      ...deps.sameOriginForm,
      deps.signedIn(async ({ req, user, base }) => {
        const jobId = String(req.params.id);
        const result = await refused(() => {
          if (action === 'override')
            return useCases.planReviews.override(user, jobId, { reason: formField(req, 'reason') });
          const comment = formField(req, 'comment');
          const body = comment?.trim() ? { comment } : {};
          return action === 'approve'
            ? useCases.planReviews.approve(user, jobId, body)
            : useCases.planReviews.reject(user, jobId, { comment });
        });
        if ('done' in result) return new Redirect(`/jobs/${jobId}`);
        const back = { path: `/jobs/${jobId}`, label: 'Back to the plan' };
        return refusedActionPage({ title: TITLES[action], refusal: result.refusal, back, base, section: 'jobs' });
      }),
    );
  }
}
