import type { PlanlessActions } from '@trellis/core';
import { type Html, html } from '../html.js';

/**
 * A button that queues a job of a vine: a plain form posted to `POST /configurations/:id/jobs`
 * (issue 29), which works without the page script. `fields` are its hidden inputs (`job_type`,
 * `plan_job_id`, `destroy`); `attrs` the button's class and data attributes.
 */
export function jobButton(
  base: string,
  vineId: string,
  fields: Record<string, string>,
  label: string,
  attrs: Html,
): Html {
  return html`<form method="post" action="${base}/configurations/${vineId}/jobs" class="inline-form button-form">${Object.entries(
    fields,
  ).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )}<button type="submit" ${attrs}>${label}</button></form>`;
}

/**
 * The vine's Destroy button, as the deploy gate allows it (issue 23): a vine that destroys only an
 * approved destroy plan is offered "Plan destroy" instead, so no page offers what core refuses.
 * Destroy asks first, on a page where the vine's name is typed.
 */
export function destroyButton(
  base: string,
  vine: { id: string; name: string },
  planless: PlanlessActions | null | undefined,
): Html {
  return planless && !planless.destroy.allowed
    ? jobButton(
        base,
        vine.id,
        { job_type: 'PLAN', destroy: 'true' },
        'Plan destroy',
        html`class="button danger" data-create-job="PLAN" data-destroy-plan`,
      )
    : jobButton(
        base,
        vine.id,
        { job_type: 'DESTROY' },
        'Destroy…',
        html`class="button danger" data-create-job="DESTROY"`,
      );
}
