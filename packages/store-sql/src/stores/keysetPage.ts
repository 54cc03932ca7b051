import type { Page, PageRequest } from '@trellis/core';
import type { Knex } from 'knex';
import { type Row, timeIn, timeOut } from '../rows.js';

/**
 * One page of a newest-first keyset query (issue 10 §2): rows sort by `timeColumn` then `seq`
 * (insertion order), both descending, and the page after a key holds the rows strictly after it.
 * `order: 'asc'` pages oldest first instead. Reads one row more than the page to know whether another page follows. The indexes of
 * migration 006 cover (owner_id, time, seq).
 */
export async function keysetPage<T>(
  query: Knex.QueryBuilder,
  timeColumn: string,
  request: PageRequest,
  toRecord: (row: Row) => T,
  seqColumn = 'seq',
  order: 'desc' | 'asc' = 'desc',
): Promise<Page<T>> {
  const after = request.after;
  const beyond = order === 'desc' ? '<' : '>';
  if (after !== undefined) {
    const at = timeIn(after.at);
    query.where((keyset) =>
      keyset
        .where(timeColumn, beyond, at)
        .orWhere((tie) => tie.where(timeColumn, '=', at).andWhere(seqColumn, beyond, after.seq)),
    );
  }
  const rows: Row[] = await query
    .orderBy([
      { column: timeColumn, order },
      { column: seqColumn, order },
    ])
    .limit(request.limit + 1);
  const pageRows = rows.slice(0, request.limit);
  const last = pageRows[pageRows.length - 1];
  const next =
    rows.length > request.limit && last !== undefined ? { at: timeOut(last[timeColumn]), seq: Number(last.seq) } : null;
  return { items: pageRows.map(toRecord), next };
}
