import type { OwnerIds } from './UnitOfWork.js';
import type { ApprovalSetting } from '../domain/policies.js';
import type { VineStatus } from '../domain/enums.js';
import type { Page, PageRequest } from '../domain/pagination.js';
import type { FleetCounts, FleetFilter, FleetVine, PlanPolicyResult } from '../fleet/fleet.js';
import type { ExecutionMode } from '../domain/enums.js';
import type {
  DriftDetection,
  Engine,
  DriftResult,
  NewVine,
  Variables,
  Vine,
  VineComponents,
  VineSource,
  VineTriggers,
  WorkspaceSettings,
} from '../domain/records.js';

export interface VineFilter {
  vineyard_id?: string;
  /** Vines of any of these vineyards. */
  vineyard_ids?: readonly string[];
}

/** Vines and their components (cluster, argocd, outputs) written by finalizeDeployment. */
export interface VineStore {
  /** `ConflictError('vine_name_taken' | 'project_name_taken')` on a duplicate per owner. */
  create(vine: NewVine): Promise<Vine>;
  get(ownerId: string, id: string): Promise<Vine | null>;
  findByName(ownerId: string, name: string): Promise<Vine | null>;
  findByProjectName(ownerId: string, projectName: string): Promise<Vine | null>;
  /** Oldest first. */
  list(ownerId: string, filter?: VineFilter): Promise<Vine[]>;
  /** One page, newest first (by `created_at`, then insertion). */
  page(owners: OwnerIds, request: PageRequest): Promise<Page<Vine>>;
  /**
   * The fleet (issue 29): one page of the owners' vines that stand as `filter` says, newest first
   * (by `created_at`, then insertion, as `page`), each with its latest plan's policy result.
   */
  fleetPage(owners: OwnerIds, filter: FleetFilter, request: PageRequest): Promise<Page<FleetVine>>;
  /** How many of the owners' vines stand each way under `filter` (`FleetCounts` says how each dimension is counted). */
  fleetCounts(owners: OwnerIds, filter: FleetFilter): Promise<FleetCounts>;
  /** Records the policy result of the vine's latest plan (`fleet.ts`); a vine no longer there is left alone. */
  recordPlanPolicy(ownerId: string, id: string, result: PlanPolicyResult): Promise<void>;
  updateStatus(ownerId: string, id: string, status: VineStatus, message: string | null, at: string): Promise<Vine>;
  getComponents(ownerId: string, vineId: string): Promise<VineComponents>;
  /** Replaces the kinds present in `components`; kinds that are null are left as they are. */
  saveComponents(ownerId: string, vineId: string, components: VineComponents, at: string): Promise<void>;
  clearComponents(ownerId: string, vineId: string): Promise<void>;
  /**
   * Deletes the vine with its components, state versions and lock (issue 26: a workspace deleted
   * through the Terraform Cloud protocol; it must have no jobs). Answers the storage keys of the
   * state versions, whose bytes go too.
   */
  delete(ownerId: string, id: string): Promise<string[]>;
  /**
   * Deletes the vine the way a person does (issue 25): it is gone from every read and its name is
   * free, its lock, components and drift schedule go, and its state versions stay until
   * `purgeDeleted` runs at or after `purgeAfter` (null: kept). Its jobs keep their history.
   */
  markDeleted(ownerId: string, id: string, at: string, purgeAfter: string | null): Promise<void>;
  /**
   * System work: the state versions of up to `limit` deleted vines whose `purgeAfter` is at or
   * before `now` are deleted (each vine once); answers the storage keys, whose bytes go too.
   */
  purgeDeleted(now: string, limit: number): Promise<string[]>;
  /**
   * Sets the fields present in `patch` (drift schedule, run triggers, workspace settings); the
   * vine comes back. A name taken by another vine of the owner is `ConflictError('vine_name_taken')`.
   */
  updateSettings(ownerId: string, id: string, patch: VineSettingsPatch, at: string): Promise<Vine>;
  /** Records the result of a drift check; null forgets it (a destroyed vine has no drift). */
  recordDrift(ownerId: string, id: string, drift: DriftResult | null): Promise<void>;
  /** Vines of the owner whose `triggers.after` names `upstreamId`, oldest first. */
  listDownstream(ownerId: string, upstreamId: string): Promise<Vine[]>;
  /**
   * System work: up to `limit` vines of any owner whose `next_drift_check_at` is at or before
   * `now`, earliest first. On Postgres the rows are locked `FOR UPDATE SKIP LOCKED` until the unit
   * of work ends, so a concurrent caller (another replica) takes other vines, never these.
   */
  takeDueDriftChecks(now: string, limit: number): Promise<Vine[]>;
}

export interface VineSettingsPatch {
  drift_detection?: DriftDetection | null;
  next_drift_check_at?: string | null;
  triggers?: VineTriggers;
  /** Whether a DEPLOY needs an approved plan (issue 15); null: no approval. */
  approval?: ApprovalSetting | null;
  /** Connecting a repository (issue 13) makes the source that repository. */
  source?: VineSource;
  /** The workspace settings of the Terraform Cloud protocol (issue 26). */
  name?: string;
  variables?: Variables;
  /** A person's edit (issue 25); `project_name_taken` on a duplicate. */
  project_name?: string;
  engine?: Engine;
  cloud_identity_id?: string | null;
  tags?: string[];
  terraform_version?: string;
  execution_mode?: ExecutionMode;
  workspace_settings?: WorkspaceSettings;
}
