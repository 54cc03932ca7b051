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
  const rows = await pageRows(query, timeColumn, request, seqColumn, order);
  return toPage(rows, timeColumn, request, toRecord);
}

/**
 * The same page over several owners, flat in their number of rows (issue 17): one keyset query
 * per owner, each read in the order of its (owner_id, time, seq) index and limited, then merged.
 * A single `owner_id IN (…)` query cannot be read in order from that index, so the database
 * would sort every row of those owners to answer a page.
 */
export async function keysetPageOfOwners<T>(
  owners: readonly string[],
  queryOf: (ownerId: string) => Knex.QueryBuilder,
  timeColumn: string,
  request: PageRequest,
  toRecord: (row: Row) => T,
  seqColumn = 'seq',
  order: 'desc' | 'asc' = 'desc',
): Promise<Page<T>> {
  const distinct = [...new Set(owners)];
  if (distinct.length === 1) {
    return keysetPage(queryOf(distinct[0] as string), timeColumn, request, toRecord, seqColumn, order);
  }
  const rows: Row[] = [];
  // One after the other: the statements share the unit of work's connection anyway.
  for (const ownerId of distinct)
    rows.push(...(await pageRows(queryOf(ownerId), timeColumn, request, seqColumn, order)));
  const keyOf = (row: Row): [string, number] => [timeOut(row[timeColumn]), Number(row[seqColumn])];
  const direction = order === 'desc' ? -1 : 1;
  rows.sort((a, b) => {
    const [atA, seqA] = keyOf(a);
    const [atB, seqB] = keyOf(b);
    if (atA !== atB) return (atA < atB ? -1 : 1) * direction;
    return (seqA - seqB) * direction;
  });
  return toPage(rows.slice(0, request.limit + 1), timeColumn, request, toRecord);
}

/** The rows strictly after the request's key, in order: one more than the page, if there are. */
async function pageRows(
  query: Knex.QueryBuilder,
  timeColumn: string,
  request: PageRequest,
  seqColumn: string,
  order: 'desc' | 'asc',
): Promise<Row[]> {
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
  return query
    .orderBy([
      { column: timeColumn, order },
      { column: seqColumn, order },
    ])
    .limit(request.limit + 1);
}

function toPage<T>(rows: Row[], timeColumn: string, request: PageRequest, toRecord: (row: Row) => T): Page<T> {
  const pageRows = rows.slice(0, request.limit);
  const last = pageRows[pageRows.length - 1];
  const next =
    rows.length > request.limit && last !== undefined ? { at: timeOut(last[timeColumn]), seq: Number(last.seq) } : null;
  return { items: pageRows.map(toRecord), next };
}
