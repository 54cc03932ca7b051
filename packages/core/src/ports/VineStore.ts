import type { OwnerIds } from './UnitOfWork.js';
import type { VineStatus } from '../domain/enums.js';
import type { Page, PageRequest } from '../domain/pagination.js';
import type { DriftDetection, DriftResult, Vine, VineComponents, VineSource, VineTriggers } from '../domain/records.js';

export interface VineFilter {
  vineyard_id?: string;
  /** Vines of any of these vineyards. */
  vineyard_ids?: readonly string[];
}

/** Vines and their components (cluster, argocd, outputs) written by finalizeDeployment. */
export interface VineStore {
  /** `ConflictError('vine_name_taken' | 'project_name_taken')` on a duplicate per owner. */
  create(vine: Vine): Promise<Vine>;
  get(ownerId: string, id: string): Promise<Vine | null>;
  findByName(ownerId: string, name: string): Promise<Vine | null>;
  findByProjectName(ownerId: string, projectName: string): Promise<Vine | null>;
  /** Oldest first. */
  list(ownerId: string, filter?: VineFilter): Promise<Vine[]>;
  /** One page, newest first (by `created_at`, then insertion). */
  page(owners: OwnerIds, request: PageRequest): Promise<Page<Vine>>;
  updateStatus(ownerId: string, id: string, status: VineStatus, message: string | null, at: string): Promise<Vine>;
  getComponents(ownerId: string, vineId: string): Promise<VineComponents>;
  /** Replaces the kinds present in `components`; kinds that are null are left as they are. */
  saveComponents(ownerId: string, vineId: string, components: VineComponents, at: string): Promise<void>;
  clearComponents(ownerId: string, vineId: string): Promise<void>;
  /** Sets the fields present in `patch` (drift schedule, run triggers); the vine comes back. */
  updateSettings(ownerId: string, id: string, patch: VineSettingsPatch, at: string): Promise<Vine>;
  /** Records the result of a drift check. */
  recordDrift(ownerId: string, id: string, drift: DriftResult): Promise<void>;
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
  /** Connecting a repository (issue 13) makes the source that repository. */
  source?: VineSource;
}
