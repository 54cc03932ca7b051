/**
 * The records of a job (SPEC §2): what it runs (its snapshot), the job itself, and its log. Split
 * from `records.ts`, which re-exports them.
 */
import type { ClaimedPolicy, PlanApproval, PolicyOverride } from './policies.js';
import type { ExecutionMetadata } from './jobResults.js';
import type { JobStatus, JobType, StreamType, VineStatus, WorkerMode } from './enums.js';
import type { Engine, JobTrigger, Variables, VineSource } from './records.js';

/**
 * The source of a remote run from the stock CLI (issue 27): the configuration version it uploaded,
 * run in `path` (the workspace's working directory; null: the root). Only a job has it, never a vine.
 */
export interface UploadedSource {
  type: 'upload';
  configuration_version_id: string;
  path: string | null;
}

export interface ConfigSnapshot {
  vine: { id: string; name: string; project_name: string; vineyard_id: string } | null;
  source: VineSource | UploadedSource | null;
  variables: Variables;
  engine: Engine | null;
  cloud_identity_id: string | null;
  /** Set for DESTROY_WORKER jobs, which act on a worker rather than a vine. */
  target_worker?: { id: string; name: string; mode: WorkerMode };
  /** A destroy plan, or the DESTROY applying one (issue 23): its hash never equals a deploy's. */
  destroy?: true;
  /** How a run of the Terraform Cloud protocol asked the engine to plan (issue 27); absent: a full plan. */
  run_options?: RunOptions;
}

/**
 * The engine options of a remote run from the stock CLI (issue 27): `-target`, `-replace`,
 * `-refresh-only`, `-refresh=false`. The agent passes them to its plan; a DEPLOY applies the plan.
 */
export interface RunOptions {
  target?: string[];
  replace?: string[];
  refresh_only?: true;
  refresh?: false;
  /**
   * The names of the variables the run itself set (`-var`, `-var-file`), whose values in the
   * snapshot override the vine's for this run: the stale-plan guard takes them from the plan.
   */
  variables?: string[];
}

export interface Job {
  id: string;
  owner_id: string;
  job_type: JobType;
  status: JobStatus;
  config_snapshot: ConfigSnapshot;
  config_hash: string;
  vine_id: string | null;
  vineyard_id: string | null;
  cloud_identity_id: string | null;
  assigned_worker_id: string | null;
  claimed_by_worker_id: string | null;
  plan_job_id: string | null;
  target_worker_id: string | null;
  /** What its agent reported: the known results typed (`jobResults.ts`), and its own fields. */
  execution_metadata: ExecutionMetadata;
  error_message: string | null;
  /** The vine's status when the job was claimed, restored if the job is cancelled. */
  vine_status_before: VineStatus | null;
  trigger: JobTrigger;
  /** The person who queued the job; null when the system did (drift check, run trigger). */
  created_by: string | null;
  /** Of a system job, the person whose deploy or push caused it (issue 23); the creator for the separate approver. */
  caused_by: string | null;
  /** The policy versions its claim carried (issue 23), recorded at claim time; null: not claimed. */
  claimed_policies: ClaimedPolicy[] | null;
  /** A PLAN's approval or rejection (issue 15); null: undecided. */
  approval: PlanApproval | null;
  /** A PLAN's override of its failed mandatory policies (issue 15); null: none. */
  policy_override: PolicyOverride | null;
  created_at: string;
  claimed_at: string | null;
  finished_at: string | null;
}

/**
 * What lists show of a source (issue 10 §2): a git source as it is, an inline source without
 * its files, which can weigh megabytes each.
 */
export type SourceSummary = VineSourceSummary | UploadedSource;

/** What lists show of a vine's own source (a vine's source is never an upload). */
export type VineSourceSummary = Exclude<VineSource, { type: 'inline' }> | { type: 'inline'; file_count: number };

export interface SnapshotSummary extends Omit<ConfigSnapshot, 'source' | 'variables'> {
  source: SourceSummary | null;
}

/** A job in a list: its snapshot without files and variables. The job's detail has them. */
export interface JobSummary extends Omit<Job, 'config_snapshot'> {
  config_snapshot: SnapshotSummary;
}

export interface LogChunk {
  id: number;
  job_id: string;
  log_chunk: string;
  stream_type: StreamType;
  created_at: string;
}
