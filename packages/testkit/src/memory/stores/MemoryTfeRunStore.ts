import { ConflictError, type TfeRun, type TfeRunStore } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

/** Remote runs (issue 27): one per plan job, gone with it (SQL: a cascading foreign key). */
export class MemoryTfeRunStore implements TfeRunStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(run: TfeRun): Promise<TfeRun> {
    this.tx.checkWrite('tfe_runs', run.owner_id);
    const job = this.tx.state.jobs.get(run.plan_job_id);
    if (!job || job.owner_id !== run.owner_id) {
      throw new ConflictError('referenced_record_missing', 'the record refers to a record that does not exist');
    }
    if (this.tx.state.tfeRuns.has(run.plan_job_id)) {
      throw new ConflictError('duplicate_key', 'a run of this plan job already exists');
    }
    this.tx.state.tfeRuns.set(run.plan_job_id, copy(run));
    return copy(run);
  }

  async get(ownerId: string, planJobId: string): Promise<TfeRun | null> {
    const run = this.live(planJobId);
    return run && run.owner_id === ownerId && this.tx.sees(ownerId) ? copy(run) : null;
  }

  async listByVine(ownerId: string, vineId: string): Promise<TfeRun[]> {
    return this.list(ownerId).filter((run) => run.vine_id === vineId);
  }

  async listByOwner(ownerId: string): Promise<TfeRun[]> {
    return this.list(ownerId);
  }

  async confirm(ownerId: string, planJobId: string, at: string, by: string): Promise<boolean> {
    const run = this.writable(ownerId, planJobId);
    if (!run || run.confirmed_at !== null || run.discarded_at !== null) return false;
    run.confirmed_at = at;
    run.confirmed_by = by;
    return true;
  }

  async setApply(ownerId: string, planJobId: string, applyJobId: string): Promise<void> {
    const run = this.writable(ownerId, planJobId);
    if (run) run.apply_job_id = applyJobId;
  }

  async discard(ownerId: string, planJobId: string, at: string, by: string): Promise<boolean> {
    const run = this.writable(ownerId, planJobId);
    if (!run || run.discarded_at !== null) return false;
    run.discarded_at = at;
    run.discarded_by = by;
    return true;
  }

  private list(ownerId: string): TfeRun[] {
    if (!this.tx.sees(ownerId)) return [];
    return [...this.tx.state.tfeRuns.values()]
      .filter((run) => run.owner_id === ownerId && this.live(run.plan_job_id) !== null)
      .sort((a, b) =>
        a.created_at === b.created_at
          ? b.plan_job_id.localeCompare(a.plan_job_id)
          : b.created_at.localeCompare(a.created_at),
      )
      .map((run) => copy(run));
  }

  /** The run, while its plan job exists (a deleted job takes its run with it). */
  private live(planJobId: string): TfeRun | null {
    const run = this.tx.state.tfeRuns.get(planJobId);
    return run && this.tx.state.jobs.has(planJobId) ? run : null;
  }

  private writable(ownerId: string, planJobId: string): TfeRun | null {
    const run = this.live(planJobId);
    if (!run || run.owner_id !== ownerId || !this.tx.sees(ownerId)) return null;
    this.tx.checkWrite('tfe_runs', ownerId);
    return run;
  }
}
