import type { SqlSession } from '../dialects/Dialect.js';
import { type Row, timeIn } from '../rows.js';
import type { TableName } from '../schema.js';

/**
 * The claim of a transactional outbox (notification deliveries, git provider feedback): up to
 * `limit` pending rows due at `now`, oldest due first, moved to `leaseUntil` so no other worker
 * takes them while they are sent. On Postgres rows another transaction holds are skipped
 * (`FOR UPDATE SKIP LOCKED`), so replicas never take one twice. Answers the rows as updated.
 */
export async function claimDueOutboxRows(
  db: SqlSession,
  table: TableName,
  now: string,
  leaseUntil: string,
  limit: number,
): Promise<Row[]> {
  const due: Row[] = await db.lockSkippingLocked(
    db
      .table(table)
      .select('seq')
      .where({ status: 'pending' })
      .where('next_attempt_at', '<=', timeIn(now))
      .orderBy([{ column: 'next_attempt_at' }, { column: 'seq' }])
      .limit(limit),
  );
  if (due.length === 0) return [];
  return db
    .table(table)
    .whereIn(
      'seq',
      due.map((row) => row.seq as number),
    )
    .update({ next_attempt_at: timeIn(leaseUntil) })
    .returning('*');
}
