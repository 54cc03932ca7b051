import { type PlanSummary, planChanges } from '@trellis/core';

/** A plan's summary for people: `No changes.` or `2 to add, 1 to change, 0 to destroy`. */
export function planSummaryText(summary: PlanSummary): string {
  if (planChanges(summary) === 0) return 'No changes.';
  return `${summary.add} to add, ${summary.change} to change, ${summary.destroy} to destroy`;
}
