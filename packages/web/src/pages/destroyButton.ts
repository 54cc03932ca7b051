import type { PlanlessActions } from '@trellis/core';
import { type Html, html } from '../html.js';

/**
 * The vine's Destroy button, as the deploy gate allows it (issue 23): a vine that destroys only an
 * approved destroy plan is offered "Plan destroy" instead, so no page offers what core refuses.
 */
export function destroyButton(vine: { id: string; name: string }, planless: PlanlessActions | null | undefined): Html {
  return planless && !planless.destroy.allowed
    ? html`<button type="button" class="button danger" data-create-job="PLAN" data-destroy-plan data-configuration-id="${vine.id}">Plan destroy</button>`
    : html`<button type="button" class="button danger" data-create-job="DESTROY" data-configuration-id="${vine.id}" data-confirm="Destroy every resource of ${vine.name}? This cannot be undone.">Destroy</button>`;
}
