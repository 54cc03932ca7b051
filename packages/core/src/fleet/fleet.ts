/**
 * The fleet (issue 29): every configuration a person may read, across vineyards and
 * organizations, filtered by where each one stands (its status, its drift, the policies of its
 * latest plan, a tag, when it last changed), with counts of each standing over the filter.
 */
import { VINE_STATUSES, type VineStatus } from '../domain/enums.js';
import { type FieldIssue, ValidationError } from '../domain/errors.js';
import type { PolicyResult } from '../domain/policies.js';
import { isSpeculativeTrigger, type Job, type Vine } from '../domain/records.js';
import { TAG_PATTERN } from '../domain/tags.js';

/** A vine's drift as the fleet filters it: the last check's result, or `never_checked`. */
export const FLEET_DRIFT = ['drifted', 'in_sync', 'unknown', 'never_checked'] as const;
export type FleetDrift = (typeof FLEET_DRIFT)[number];

/**
 * The policies of a vine's latest plan (its latest successful PLAN that can be deployed: drift
 * checks and pull requests' plans are passed over): `failed` when any policy did not pass
 * (advisory ones too), `passed` when every one did, `none` when it had no policy or there is no
 * such plan.
 */
export const PLAN_POLICY_RESULTS = ['passed', 'failed', 'none'] as const;
export type PlanPolicyResult = (typeof PLAN_POLICY_RESULTS)[number];

/** What the fleet list is filtered by; every field absent: no filter. */
export interface FleetFilter {
  status?: VineStatus;
  drift?: FleetDrift;
  policy?: PlanPolicyResult;
  /** Vines carrying this tag (tags are lower case). */
  tag?: string;
  /** Last changed (`updated_at`) at or after this instant. */
  changed_since?: string;
  /** Last changed strictly before this instant. */
  changed_before?: string;
}

/** A vine as the fleet lists it: the vine and the policy result of its latest plan. */
export type FleetVine = Vine & { policy: PlanPolicyResult };

/**
 * How many vines stand each way. Each dimension is counted under the other dimensions' filters
 * (not its own), so the counts say what choosing one of them would list: `status.FAILED` is the
 * number of vines the filter with `status=FAILED` lists. `total` is what the filter lists.
 */
export interface FleetCounts {
  total: number;
  status: Record<VineStatus, number>;
  drift: Record<FleetDrift, number>;
  policy: Record<PlanPolicyResult, number>;
}

/** The fleet's filter as a request gives it (query strings), before it is read. */
export interface FleetQuery {
  status?: unknown;
  drift?: unknown;
  policy?: unknown;
  tag?: unknown;
  changed_since?: unknown;
  changed_before?: unknown;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** Reads the filter; every bad field in one `ValidationError`. Empty strings are no filter (a form's blank field). */
export function parseFleetFilter(query: FleetQuery): FleetFilter {
  const issues: FieldIssue[] = [];
  const filter: FleetFilter = {};
  const given = (value: unknown): value is string => typeof value === 'string' && value !== '';
  const oneOf = <T extends string>(name: keyof FleetQuery, values: readonly T[]): T | undefined => {
    const value = query[name];
    if (value === undefined || value === '') return undefined;
    if (given(value) && (values as readonly string[]).includes(value)) return value as T;
    issues.push({ path: name, message: `must be one of ${values.join(', ')}` });
    return undefined;
  };
  const status = oneOf('status', VINE_STATUSES);
  if (status) filter.status = status;
  const drift = oneOf('drift', FLEET_DRIFT);
  if (drift) filter.drift = drift;
  const policy = oneOf('policy', PLAN_POLICY_RESULTS);
  if (policy) filter.policy = policy;
  if (query.tag !== undefined && query.tag !== '') {
    if (given(query.tag) && TAG_PATTERN.test(query.tag)) filter.tag = query.tag.toLowerCase();
    else issues.push({ path: 'tag', message: 'a tag is letters, digits, ":", "_", "." and "-"' });
  }
  for (const name of ['changed_since', 'changed_before'] as const) {
    const value = query[name];
    if (value === undefined || value === '') continue;
    const instant = given(value) ? instantOf(value) : null;
    if (instant === null) issues.push({ path: name, message: 'must be a date (YYYY-MM-DD) or an ISO-8601 time' });
    else filter[name] = instant;
  }
  if (issues.length > 0) {
    throw new ValidationError(`the fleet filter is not valid: ${issues.map((i) => i.path).join(', ')}`, issues);
  }
  return filter;
}

/** A date is its first instant (UTC); a time with a zone is that instant. */
function instantOf(value: string): string | null {
  if (DATE_ONLY.test(value)) {
    const date = new Date(`${value}T00:00:00.000Z`);
    return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value ? null : date.toISOString();
  }
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || !/(Z|[+-]\d{2}:\d{2})$/.test(value)) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

/** The drift standing of a vine. */
export function fleetDriftOf(vine: Pick<Vine, 'drift'>): FleetDrift {
  return vine.drift === null ? 'never_checked' : vine.drift.status;
}

/** The result of a plan's policies (`PLAN_POLICY_RESULTS`). */
export function planPolicyResultOf(results: readonly PolicyResult[] | undefined): PlanPolicyResult {
  if (results === undefined || results.length === 0) return 'none';
  return results.every((result) => result.passed) ? 'passed' : 'failed';
}

/** Whether this job's end sets its vine's latest plan policy result: a successful, deployable PLAN of a vine. */
export function setsPlanPolicy(job: Pick<Job, 'job_type' | 'status' | 'vine_id' | 'trigger'>): boolean {
  return (
    job.job_type === 'PLAN' && job.status === 'SUCCESS' && job.vine_id !== null && !isSpeculativeTrigger(job.trigger)
  );
}

/** Whether the vine stands as the filter asks (the memory store and tests filter in code). */
export function matchesFleetFilter(vine: FleetVine, filter: FleetFilter): boolean {
  return (
    (filter.status === undefined || vine.status === filter.status) &&
    (filter.drift === undefined || fleetDriftOf(vine) === filter.drift) &&
    (filter.policy === undefined || vine.policy === filter.policy) &&
    (filter.tag === undefined || vine.tags.includes(filter.tag)) &&
    (filter.changed_since === undefined || Date.parse(vine.updated_at) >= Date.parse(filter.changed_since)) &&
    (filter.changed_before === undefined || Date.parse(vine.updated_at) < Date.parse(filter.changed_before))
  );
}

/** Counts of no vine, every standing present. */
export function emptyFleetCounts(): FleetCounts {
  const zeros = <T extends string>(values: readonly T[]) =>
    Object.fromEntries(values.map((value) => [value, 0])) as Record<T, number>;
  return { total: 0, status: zeros(VINE_STATUSES), drift: zeros(FLEET_DRIFT), policy: zeros(PLAN_POLICY_RESULTS) };
}

/** Where one vine (or a group of `n` alike) stands in the three counted dimensions. */
export interface FleetStanding {
  status: VineStatus;
  drift: FleetDrift;
  policy: PlanPolicyResult;
}

/**
 * Adds `n` vines standing as `standing` to `counts`, each dimension under the other dimensions'
 * filters (`FleetCounts`). The vines must already match the filter's other fields (tag, last
 * change): a store groups them by standing under those, then tallies each group here.
 */
export function tallyFleet(counts: FleetCounts, standing: FleetStanding, n: number, filter: FleetFilter): void {
  const status = filter.status === undefined || standing.status === filter.status;
  const drift = filter.drift === undefined || standing.drift === filter.drift;
  const policy = filter.policy === undefined || standing.policy === filter.policy;
  if (drift && policy) counts.status[standing.status] += n;
  if (status && policy) counts.drift[standing.drift] += n;
  if (status && drift) counts.policy[standing.policy] += n;
  if (status && drift && policy) counts.total += n;
}

/** The counts over vines already in hand (the memory store), as `FleetCounts` says. */
export function countFleet(vines: readonly FleetVine[], filter: FleetFilter): FleetCounts {
  const counts = emptyFleetCounts();
  const { status: _s, drift: _d, policy: _p, ...rest } = filter;
  for (const vine of vines) {
    if (!matchesFleetFilter(vine, rest)) continue;
    tallyFleet(counts, { status: vine.status, drift: fleetDriftOf(vine), policy: vine.policy }, 1, filter);
  }
  return counts;
}
