import type { Json, JsonObject, PlanSummary, ResourceChange } from '@trellis/core';
import { MAX_RESOURCE_CHANGES } from '@trellis/core/agent';

// The results' shapes and limits are core's (`jobResults.ts`): the control plane judges them by the same rule.
export { MAX_RESOURCE_CHANGES, type PlanSummary };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Counts `resource_changes[].change.actions` of `show -json <plan>`: a replacement
 * (`["delete","create"]` or `["create","delete"]`) is one add and one destroy.
 */
export function summarizePlan(plan: unknown): PlanSummary {
  const summary: PlanSummary = { add: 0, change: 0, destroy: 0 };
  const changes = isObject(plan) && Array.isArray(plan.resource_changes) ? plan.resource_changes : [];
  for (const entry of changes) {
    const actions = isObject(entry) && isObject(entry.change) ? entry.change.actions : null;
    if (!Array.isArray(actions)) continue;
    if (actions.includes('create')) summary.add += 1;
    if (actions.includes('delete')) summary.destroy += 1;
    if (actions.includes('update')) summary.change += 1;
  }
  return summary;
}

export interface ResourceChanges {
  /** Each resource the plan changes (no-op and read-only entries left out), in the plan's order. */
  resource_changes: ResourceChange[];
  /** How many more changed resources there were past `MAX_RESOURCE_CHANGES`. */
  resource_changes_omitted: number;
}

/**
 * The addresses and actions of `resource_changes` of `show -json <plan>` that change something
 * (so a pull request comment can list them): at most `limit`, with a count of the rest.
 */
export function resourceChanges(plan: unknown, limit = MAX_RESOURCE_CHANGES): ResourceChanges {
  const listed: ResourceChange[] = [];
  let omitted = 0;
  const changes = isObject(plan) && Array.isArray(plan.resource_changes) ? plan.resource_changes : [];
  for (const entry of changes) {
    if (!isObject(entry) || typeof entry.address !== 'string' || !isObject(entry.change)) continue;
    const actions = entry.change.actions;
    if (!Array.isArray(actions) || !actions.every((a): a is string => typeof a === 'string')) continue;
    if (actions.length === 0 || actions.every((a) => a === 'no-op' || a === 'read')) continue;
    if (listed.length < limit) listed.push({ address: entry.address, actions: [...actions] });
    else omitted += 1;
  }
  return { resource_changes: listed, resource_changes_omitted: omitted };
}

export interface OutputsReport {
  metadata: JsonObject;
  /** Outputs left out of `outputs` because they are sensitive; their values never leave the agent. */
  sensitive: string[];
  /** Notes for the job log (e.g. an endpoint that is not a URL). */
  notes: string[];
}

/** Past this the report would near the server's 256 KiB limit on `execution_metadata`. */
const MAX_OUTPUTS_BYTES = 192 * 1024;

/**
 * What a DEPLOY reports from `output -json`: `cluster_name`, `cluster_endpoint`, `argocd_url`
 * (when present, not sensitive and of the right shape) and every non-sensitive output in the
 * `{value, type, sensitive}` shape. Sensitive outputs are named in `sensitive_outputs` only.
 */
export function outputsMetadata(raw: unknown): OutputsReport {
  const outputs: JsonObject = {};
  const sensitive: string[] = [];
  const notes: string[] = [];
  const values: Record<string, Json> = {};
  for (const [name, entry] of Object.entries(isObject(raw) ? raw : {})) {
    if (!isObject(entry)) continue;
    if (entry.sensitive === true) {
      sensitive.push(name);
      continue;
    }
    const value = (entry.value ?? null) as Json;
    values[name] = value;
    outputs[name] = { value, type: (entry.type ?? null) as Json, sensitive: false };
  }
  const metadata: JsonObject = {};
  for (const [key, url] of [
    ['cluster_name', false],
    ['cluster_endpoint', true],
    ['argocd_url', true],
  ] as const) {
    const value = values[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || (url && !URL.canParse(value))) {
      notes.push(`output ${key} is not ${url ? 'a URL' : 'a string'}; it is kept with the other outputs only`);
      continue;
    }
    metadata[key] = value;
  }
  if (Buffer.byteLength(JSON.stringify(outputs)) > MAX_OUTPUTS_BYTES) {
    notes.push(`the outputs are over ${MAX_OUTPUTS_BYTES / 1024} KiB; only their names are reported`);
    metadata.outputs = Object.fromEntries(Object.keys(outputs).map((name) => [name, '(too large)']));
  } else {
    metadata.outputs = outputs;
  }
  if (sensitive.length > 0) metadata.sensitive_outputs = sensitive;
  return { metadata, sensitive, notes };
}
