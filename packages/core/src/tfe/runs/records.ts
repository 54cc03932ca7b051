import { isUuid } from '../../domain/validation.js';

/**
 * A remote run of the stock CLI (issue 27): a run IS its PLAN job. Its ids are made of the plan
 * job's id: the run `run-<id>`, its plan `plan-<id>`, its apply `apply-<id>` (the DEPLOY or
 * DESTROY of that plan, if any), its policy check `polchk-<id>`. What the job does not say of the
 * run (what the CLI asked for, a discard, a confirmation) is this record, keyed by the plan job.
 */
export interface TfeRun {
  plan_job_id: string;
  owner_id: string;
  vine_id: string;
  /** The uploaded configuration version it plans (the record's id, without `cv-`). */
  configuration_version_id: string;
  message: string;
  is_destroy: boolean;
  auto_apply: boolean;
  /** A speculative run (`plan-only`, or a speculative configuration version): never applied. */
  plan_only: boolean;
  save_plan: boolean;
  refresh: boolean;
  refresh_only: boolean;
  target_addrs: string[];
  replace_addrs: string[];
  /** The names of the run's own variables (their values are in the plan job's snapshot only). */
  variable_keys: string[];
  /** A person said yes while the plan waited for its approval: the apply is queued once approved. */
  confirmed_at: string | null;
  confirmed_by: string | null;
  /** The DEPLOY or DESTROY the protocol queued of its plan (a failed one is not among the plan's holding deploys). */
  apply_job_id: string | null;
  /** A person discarded it: its plan is never applied. */
  discarded_at: string | null;
  discarded_by: string | null;
  created_by: string;
  created_at: string;
}

/** Where runs are recorded; a run goes with its plan job. */
export interface TfeRunStore {
  create(run: TfeRun): Promise<TfeRun>;
  get(ownerId: string, planJobId: string): Promise<TfeRun | null>;
  /** The vine's runs, newest first. */
  listByVine(ownerId: string, vineId: string): Promise<TfeRun[]>;
  /** The owner's runs, newest first. */
  listByOwner(ownerId: string): Promise<TfeRun[]>;
  /** Records a confirmation, once: false when it was already confirmed or discarded. */
  confirm(ownerId: string, planJobId: string, at: string, by: string): Promise<boolean>;
  /** Records the DEPLOY or DESTROY queued of its plan. */
  setApply(ownerId: string, planJobId: string, applyJobId: string): Promise<void>;
  /** Records a discard, once: false when it was already discarded. */
  discard(ownerId: string, planJobId: string, at: string, by: string): Promise<boolean>;
}

export const RUN_ID_PREFIXES = {
  run: 'run-',
  plan: 'plan-',
  apply: 'apply-',
  policyCheck: 'polchk-',
} as const;
export type RunIdKind = keyof typeof RUN_ID_PREFIXES;

export function runId(planJobId: string): string {
  return `${RUN_ID_PREFIXES.run}${planJobId}`;
}
export function runPlanId(planJobId: string): string {
  return `${RUN_ID_PREFIXES.plan}${planJobId}`;
}
export function runApplyId(planJobId: string): string {
  return `${RUN_ID_PREFIXES.apply}${planJobId}`;
}
export function runPolicyCheckId(planJobId: string): string {
  return `${RUN_ID_PREFIXES.policyCheck}${planJobId}`;
}

/** The plan job id of a run's (or its plan's, apply's, policy check's) id, or null when it is not one. */
export function planJobIdOf(id: unknown, kind: RunIdKind = 'run'): string | null {
  const prefix = RUN_ID_PREFIXES[kind];
  if (typeof id !== 'string' || !id.startsWith(prefix)) return null;
  const rest = id.slice(prefix.length);
  return isUuid(rest) ? rest.toLowerCase() : null;
}

/** A configuration version's protocol id: `cv-<uuid>`. */
export function tfeConfigurationVersionId(id: string): string {
  return `cv-${id}`;
}
export function tfeConfigurationVersionIdOf(id: unknown): string | null {
  if (typeof id !== 'string' || !id.startsWith('cv-')) return null;
  const rest = id.slice(3);
  return isUuid(rest) ? rest.toLowerCase() : null;
}
