import type { SqlSession } from '../dialects/Dialect.js';
import { type Row, timeIn } from '../rows.js';
import type { TableName } from '../schema.js';

/**
 * The claim of a transactional outbox: up to `limit` pending rows due at `now` (narrowed by
 * `whereIn`), oldest due first, moved to `leaseUntil` so no other worker takes them while they are
 * sent. On Postgres rows another transaction holds are skipped (`FOR UPDATE SKIP LOCKED`), so
 * replicas never take one twice. Answers the rows as updated, in written order.
 */
export async function claimDueOutboxRows(
  db: SqlSession,
  table: TableName,
  now: string,
  leaseUntil: string,
  limit: number,
  whereIn: { column: string; values: readonly string[] } | null = null,
): Promise<Row[]> {
  let candidates = db
    .table(table)
    .select('seq')
    .where({ status: 'pending' })
    .where('next_attempt_at', '<=', timeIn(now));
  if (whereIn !== null) candidates = candidates.whereIn(whereIn.column, [...whereIn.values]);
  const due: Row[] = await db.lockSkippingLocked(
    candidates.orderBy([{ column: 'next_attempt_at' }, { column: 'seq' }]).limit(limit),
  );
  if (due.length === 0) return [];
  const rows: Row[] = await db
    .table(table)
    .whereIn(
      'seq',
      due.map((row) => row.seq as number),
    )
    .update({ next_attempt_at: timeIn(leaseUntil) })
    .returning('*');
  return rows.sort((a, b) => Number(a.seq) - Number(b.seq));
}
