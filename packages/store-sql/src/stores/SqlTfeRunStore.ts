import type { TfeRun, TfeRunStore } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import {
  jsonIn,
  jsonOut,
  type Row,
  textOut,
  timeIn,
  timeInOrNull,
  timeOut,
  timeOutOrNull,
  uuidOut,
  uuidOutOrNull,
} from '../rows.js';

/** Remote runs (issue 27, m045), one row per plan job. */
export class SqlTfeRunStore implements TfeRunStore {
  constructor(private readonly db: SqlSession) {}

  async create(run: TfeRun): Promise<TfeRun> {
    const [row] = await this.db
      .insert('tfe_runs', {
        plan_job_id: run.plan_job_id,
        owner_id: run.owner_id,
        vine_id: run.vine_id,
        configuration_version_id: run.configuration_version_id,
        message: run.message,
        is_destroy: run.is_destroy,
        auto_apply: run.auto_apply,
        plan_only: run.plan_only,
        save_plan: run.save_plan,
        refresh: run.refresh,
        refresh_only: run.refresh_only,
        target_addrs: jsonIn(run.target_addrs),
        replace_addrs: jsonIn(run.replace_addrs),
        variable_keys: jsonIn(run.variable_keys),
        confirmed_at: timeInOrNull(run.confirmed_at),
        confirmed_by: run.confirmed_by,
        apply_job_id: run.apply_job_id,
        discarded_at: timeInOrNull(run.discarded_at),
        discarded_by: run.discarded_by,
        created_by: run.created_by,
        created_at: timeIn(run.created_at),
      })
      .returning('*');
    return toRun(row);
  }

  async get(ownerId: string, planJobId: string): Promise<TfeRun | null> {
    const row = await this.db.table('tfe_runs').where({ owner_id: ownerId, plan_job_id: planJobId }).first();
    return row ? toRun(row) : null;
  }

  async listByVine(ownerId: string, vineId: string): Promise<TfeRun[]> {
    const rows: Row[] = await this.db
      .table('tfe_runs')
      .where({ owner_id: ownerId, vine_id: vineId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'plan_job_id', order: 'desc' },
      ]);
    return rows.map(toRun);
  }

  async listByOwner(ownerId: string): Promise<TfeRun[]> {
    const rows: Row[] = await this.db
      .table('tfe_runs')
      .where({ owner_id: ownerId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'plan_job_id', order: 'desc' },
      ]);
    return rows.map(toRun);
  }

  async confirm(ownerId: string, planJobId: string, at: string, by: string): Promise<boolean> {
    const count = await this.db
      .table('tfe_runs')
      .where({ owner_id: ownerId, plan_job_id: planJobId })
      .whereNull('confirmed_at')
      .whereNull('discarded_at')
      .update({ confirmed_at: timeIn(at), confirmed_by: by });
    return Number(count) > 0;
  }

  async setApply(ownerId: string, planJobId: string, applyJobId: string): Promise<void> {
    await this.db
      .table('tfe_runs')
      .where({ owner_id: ownerId, plan_job_id: planJobId })
      .update({ apply_job_id: applyJobId });
  }

  async discard(ownerId: string, planJobId: string, at: string, by: string): Promise<boolean> {
    const count = await this.db
      .table('tfe_runs')
      .where({ owner_id: ownerId, plan_job_id: planJobId })
      .whereNull('discarded_at')
      .update({ discarded_at: timeIn(at), discarded_by: by });
    return Number(count) > 0;
  }
}

function toRun(row: Row): TfeRun {
  return {
    plan_job_id: uuidOut(row.plan_job_id),
    owner_id: uuidOut(row.owner_id),
    vine_id: uuidOut(row.vine_id),
    configuration_version_id: uuidOut(row.configuration_version_id),
    message: textOut(row.message),
    is_destroy: Boolean(row.is_destroy),
    auto_apply: Boolean(row.auto_apply),
    plan_only: Boolean(row.plan_only),
    save_plan: Boolean(row.save_plan),
    refresh: Boolean(row.refresh),
    refresh_only: Boolean(row.refresh_only),
    target_addrs: jsonOut<string[]>(row.target_addrs),
    replace_addrs: jsonOut<string[]>(row.replace_addrs),
    variable_keys: jsonOut<string[]>(row.variable_keys),
    confirmed_at: timeOutOrNull(row.confirmed_at),
    confirmed_by: uuidOutOrNull(row.confirmed_by),
    apply_job_id: uuidOutOrNull(row.apply_job_id),
    discarded_at: timeOutOrNull(row.discarded_at),
    discarded_by: uuidOutOrNull(row.discarded_by),
    created_by: uuidOut(row.created_by),
    created_at: timeOut(row.created_at),
  };
}
