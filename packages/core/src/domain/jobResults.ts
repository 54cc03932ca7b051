/**
 * What an agent reports of a job in `execution_metadata` (issue 24): the known results (a plan's
 * summary, the resources it changes, its policy results, a deploy's outputs) have one shape,
 * judged once when the agent reports them (`PUT /api/jobs/{id}/status`) and stored as judged, so
 * every reader (the web, the git provider's comment, drift, approvals, the CLI) reads them typed.
 * A known field of the wrong shape is refused (`400 validation_failed` naming the field); other
 * fields are the agent's own and kept as they are.
 */
import { ValidationError, type FieldIssue } from './errors.js';
import { POLICY_ENFORCEMENTS, type PolicyResult } from './policies.js';
import type { Json, JsonObject } from './records.js';

/** How many resources a plan adds, changes and destroys (a replacement counts once each way). */
export type PlanSummary = { add: number; change: number; destroy: number };

/** One resource a plan changes, with the engine's actions (`["create"]`, `["delete","create"]`, ...). */
export type ResourceChange = { address: string; actions: string[] };

/** The agent lists at most this many changed resources of a plan; the rest are counted. */
export const MAX_RESOURCE_CHANGES = 200;

/**
 * A registry module the job's `init` installed (issue 28), as `.terraform/modules/modules.json`
 * names it: its source address (`host/namespace/name/system`, maybe with a `//subdir`) and version.
 */
export type ModuleUse = { source: string; version: string };

/** The agent reports at most this many installed registry modules of a job, each field this long at most. */
export const MAX_REPORTED_MODULES = 100;
export const MAX_MODULE_SOURCE_LENGTH = 512;
export const MAX_MODULE_VERSION_LENGTH = 128;

/** One report's `execution_metadata` is at most this large, serialised. */
export const MAX_REPORTED_METADATA_BYTES = 256 * 1024;

/** The known results; each is absent until an agent reports it. */
export type JobResults = {
  plan_summary?: PlanSummary;
  /** The resources a PLAN changes (no-op and read-only ones left out), at most `MAX_RESOURCE_CHANGES`. */
  resource_changes?: ResourceChange[];
  /** How many more changed resources there were. */
  resource_changes_omitted?: number;
  /** A PLAN's result of each policy it was given (issue 15). */
  policy_results?: PolicyResult[];
  /** A DEPLOY's outputs: plain values, or OpenTofu's `{value, type, sensitive}` (sensitive values redacted). */
  outputs?: JsonObject;
  /** The names of the outputs the agent left out because they are sensitive. */
  sensitive_outputs?: string[];
  cluster_name?: string | null;
  /** A URL. */
  cluster_endpoint?: string | null;
  /** A URL. */
  argocd_url?: string | null;
  /** The registry modules a PLAN's or DEPLOY's `init` installed, at most `MAX_REPORTED_MODULES` (issue 28). */
  modules?: ModuleUse[];
};

/** A job's `execution_metadata`: the known results, typed, and whatever else its agent reported. */
export type ExecutionMetadata = JsonObject & JobResults;

/** The names of the known results. */
export const JOB_RESULT_FIELDS = [
  'plan_summary',
  'resource_changes',
  'resource_changes_omitted',
  'policy_results',
  'outputs',
  'sensitive_outputs',
  'cluster_name',
  'cluster_endpoint',
  'argocd_url',
  'modules',
] as const satisfies readonly (keyof JobResults)[];

type Check = (value: unknown, path: string, issues: FieldIssue[]) => Json | undefined;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

function refuse(issues: FieldIssue[], path: string, message: string): undefined {
  issues.push({ path, message });
  return undefined;
}

const count: Check = (value, path, issues) =>
  isCount(value) ? value : refuse(issues, path, 'must be a count (an integer, 0 or more)');

const strings: Check = (value, path, issues) =>
  Array.isArray(value) && value.every((item) => typeof item === 'string')
    ? [...value]
    : refuse(issues, path, 'must be a list of strings');

function nullableString(url: boolean): Check {
  return (value, path, issues) => {
    if (value === null) return null;
    if (typeof value === 'string' && (!url || URL.canParse(value))) return value;
    return refuse(issues, path, url ? 'must be a URL' : 'must be a string');
  };
}

const planSummary: Check = (value, path, issues) => {
  if (!isObject(value)) return refuse(issues, path, 'must be {add, change, destroy}');
  const summary: PlanSummary = { add: 0, change: 0, destroy: 0 };
  let ok = true;
  for (const key of ['add', 'change', 'destroy'] as const) {
    const n = count(value[key], `${path}.${key}`, issues);
    if (n === undefined) ok = false;
    else summary[key] = n as number;
  }
  return ok ? summary : undefined;
};

const resourceChanges: Check = (value, path, issues) => {
  if (!Array.isArray(value)) return refuse(issues, path, 'must be a list of {address, actions}');
  if (value.length > MAX_RESOURCE_CHANGES) return refuse(issues, path, `at most ${MAX_RESOURCE_CHANGES} entries`);
  const changes: ResourceChange[] = [];
  value.forEach((entry, index) => {
    const at = `${path}.${index}`;
    if (!isObject(entry) || typeof entry.address !== 'string') {
      refuse(issues, at, 'must be {address, actions}');
      return;
    }
    const actions = strings(entry.actions, `${at}.actions`, issues);
    if (actions !== undefined) changes.push({ address: entry.address, actions: actions as string[] });
  });
  return changes;
};

const policyResults: Check = (value, path, issues) => {
  if (!Array.isArray(value)) return refuse(issues, path, 'must be a list of policy results');
  const results: PolicyResult[] = [];
  value.forEach((entry, index) => {
    const at = `${path}.${index}`;
    const fine =
      isObject(entry) &&
      typeof entry.policy_id === 'string' &&
      Number.isSafeInteger(entry.version) &&
      typeof entry.name === 'string' &&
      (POLICY_ENFORCEMENTS as readonly unknown[]).includes(entry.enforcement) &&
      typeof entry.passed === 'boolean' &&
      Array.isArray(entry.messages) &&
      entry.messages.every((message) => typeof message === 'string');
    if (!fine) {
      refuse(issues, at, 'must be {policy_id, version, name, enforcement, passed, messages}');
      return;
    }
    const result = entry as unknown as PolicyResult;
    results.push({
      policy_id: result.policy_id,
      version: result.version,
      name: result.name,
      enforcement: result.enforcement,
      passed: result.passed,
      messages: [...result.messages],
    });
  });
  return results;
};

const outputs: Check = (value, path, issues) =>
  isObject(value) ? (value as JsonObject) : refuse(issues, path, 'must be an object of outputs');

const boundedString = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= max;

const modules: Check = (value, path, issues) => {
  if (!Array.isArray(value)) return refuse(issues, path, 'must be a list of {source, version}');
  if (value.length > MAX_REPORTED_MODULES) return refuse(issues, path, `at most ${MAX_REPORTED_MODULES} entries`);
  const used: ModuleUse[] = [];
  value.forEach((entry, index) => {
    if (
      isObject(entry) &&
      boundedString(entry.source, MAX_MODULE_SOURCE_LENGTH) &&
      boundedString(entry.version, MAX_MODULE_VERSION_LENGTH)
    ) {
      used.push({ source: entry.source, version: entry.version });
      return;
    }
    refuse(
      issues,
      `${path}.${index}`,
      `must be {source, version}: strings of at most ${MAX_MODULE_SOURCE_LENGTH} and ${MAX_MODULE_VERSION_LENGTH} characters`,
    );
  });
  return used;
};

const CHECKS: Readonly<Record<(typeof JOB_RESULT_FIELDS)[number], Check>> = {
  plan_summary: planSummary,
  resource_changes: resourceChanges,
  resource_changes_omitted: count,
  policy_results: policyResults,
  outputs,
  sensitive_outputs: strings,
  cluster_name: nullableString(false),
  cluster_endpoint: nullableString(true),
  argocd_url: nullableString(true),
  modules,
};

/**
 * A report's `execution_metadata` as it is stored: an object of at most
 * `MAX_REPORTED_METADATA_BYTES`, its known results in their shape (each bad one named at once in
 * one `ValidationError`), its other fields as given. Absent or null: nothing reported.
 */
export function parseExecutionMetadata(value: unknown): ExecutionMetadata {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) {
    throw new ValidationError('execution_metadata must be an object', [
      { path: 'execution_metadata', message: 'must be an object' },
    ]);
  }
  if (Buffer.byteLength(JSON.stringify(value)) > MAX_REPORTED_METADATA_BYTES) {
    throw new ValidationError(`execution_metadata must be at most ${MAX_REPORTED_METADATA_BYTES} bytes`, [
      { path: 'execution_metadata', message: 'too large' },
    ]);
  }
  const issues: FieldIssue[] = [];
  const parsed: JsonObject = { ...(value as JsonObject) };
  for (const field of JOB_RESULT_FIELDS) {
    if (!(field in value) || value[field] === undefined) continue;
    const checked = CHECKS[field](value[field], `execution_metadata.${field}`, issues);
    if (checked !== undefined) parsed[field] = checked;
  }
  if (issues.length > 0) {
    throw new ValidationError(
      `execution_metadata has malformed results: ${issues.map((issue) => issue.path).join(', ')}`,
      issues,
    );
  }
  // Every known result has been checked and replaced by its typed form.
  return parsed as ExecutionMetadata;
}

/**
 * What metadata stored before the results were typed keeps: each well-formed known result, and
 * every other field. A malformed known result (no agent of Trellis sends one) is left out, so
 * what is stored always has the typed shape. Used by the migration that judged old rows (m025).
 */
export function keepWellFormedResults(metadata: JsonObject): ExecutionMetadata {
  const kept: JsonObject = {};
  for (const [field, value] of Object.entries(metadata)) {
    const check = (CHECKS as Record<string, Check | undefined>)[field];
    if (check === undefined) {
      kept[field] = value;
      continue;
    }
    // A list keeps its well-formed entries, as the readers of old showed them.
    const checked = check(value, field, []);
    if (checked !== undefined) kept[field] = checked;
  }
  return kept as ExecutionMetadata;
}

/** How many resources a plan changes in all (0: no changes). */
export function planChanges(summary: PlanSummary): number {
  return summary.add + summary.change + summary.destroy;
}
