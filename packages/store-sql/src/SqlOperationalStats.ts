import {
  isOneOf,
  type JobCount,
  type JobStatus,
  type JobType,
  type OperationalStats,
  OUTBOX_KINDS,
  type OutboxKind,
  systemScope,
} from '@trellis/core';
import type { Dialect, SqlSession } from './dialects/Dialect.js';
import { timeIn, timeOut } from './rows.js';
import { TABLES } from './schema.js';

/** `OperationalStats` on SQL: one read-only system transaction and one aggregate query per call. */
export class SqlOperationalStats implements OperationalStats {
  constructor(private readonly dialect: Dialect) {}

  async jobCounts(): Promise<JobCount[]> {
    const rows = await this.read((session) =>
      session.table(TABLES.jobs).select('job_type', 'status').count({ count: '*' }).groupBy('job_type', 'status'),
    );
    return rows.map((row) => ({
      type: row.job_type as JobType,
      status: row.status as JobStatus,
      count: Number(row.count),
    }));
  }

  async queue(): Promise<{ depth: number; oldestCreatedAt: string | null }> {
    const rows = await this.read((session) =>
      session
        .table(TABLES.jobs)
        .where('status', 'QUEUED' satisfies JobStatus)
        .count({ depth: '*' })
        .min({ oldest: 'created_at' }),
    );
    const row = rows[0] ?? {};
    return {
      depth: Number(row.depth ?? 0),
      oldestCreatedAt: row.oldest === null || row.oldest === undefined ? null : timeOut(row.oldest),
    };
  }

  async workers(heardSince: Date): Promise<{ heard: number; busy: number; silent: number }> {
    const since = timeIn(heardSince.toISOString());
    const rows = await this.read((session) =>
      session.raw(
        `select count(*) as total,
                count(*) filter (where w.last_heartbeat >= ?) as heard,
                count(*) filter (where w.last_heartbeat >= ? and exists (
                  select 1 from ${TABLES.jobs} j where j.claimed_by_worker_id = w.id and j.status = 'PROCESSING')) as busy
           from ${TABLES.workers} w
          where w.destroyed_at is null`,
        [since, since],
      ),
    );
    const row = rows[0] ?? {};
    const heard = Number(row.heard ?? 0);
    return { heard, busy: Number(row.busy ?? 0), silent: Number(row.total ?? 0) - heard };
  }

  async outboxBacklog(): Promise<Record<OutboxKind, number>> {
    const rows = await this.read((session) =>
      session.table(TABLES.outbox).where('status', 'pending').select('kind').count({ backlog: '*' }).groupBy('kind'),
    );
    const backlog = Object.fromEntries(OUTBOX_KINDS.map((kind) => [kind, 0])) as Record<OutboxKind, number>;
    for (const row of rows) {
      if (isOneOf(OUTBOX_KINDS, row.kind)) backlog[row.kind] = Number(row.backlog ?? 0);
    }
    return backlog;
  }

  private read(
    query: (session: SqlSession) => PromiseLike<Record<string, unknown>[]>,
  ): Promise<Record<string, unknown>[]> {
    return this.dialect.transaction(systemScope, async (session) => await query(session), 'read');
  }
}
