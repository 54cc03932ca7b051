import type { JsonObject } from '@trellis/core';

/** How many resources a plan adds, changes and destroys. */
export interface PlanSummary {
  add: number;
  change: number;
  destroy: number;
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/**
 * The summary an agent reported in `execution_metadata.plan_summary` (`{add, change, destroy}`),
 * when it did. Otherwise the client script reads it from the engine's `Plan: …` line in the log.
 */
export function readPlanSummary(metadata: JsonObject): PlanSummary | null {
  const raw = metadata.plan_summary;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const add = count(raw.add);
  const change = count(raw.change);
  const destroy = count(raw.destroy);
  return add === null || change === null || destroy === null ? null : { add, change, destroy };
}

export function planSummaryText(summary: PlanSummary): string {
  if (summary.add + summary.change + summary.destroy === 0) return 'No changes.';
  return `${summary.add} to add, ${summary.change} to change, ${summary.destroy} to destroy`;
}
