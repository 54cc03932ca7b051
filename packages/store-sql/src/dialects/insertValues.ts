import type { Scope } from '@trellis/core';
import type { Knex } from 'knex';
import type { Row } from '../rows.js';
import type { TableName } from '../schema.js';
import { assertRowsInScope, OWNER_COLUMNS } from './scoping.js';

/**
 * `SqlSession.insertValues` for both dialects: one `INSERT INTO t (…) VALUES (?, …), … <suffix>`
 * whose text depends only on the shape of the rows, with every value bound (never spliced into the
 * text), run as raw SQL. The owner check is `insert`'s, on the owner column of each row.
 */
export async function insertValues(
  raw: (sql: string, bindings: readonly Knex.RawBinding[]) => Promise<Row[]>,
  scope: Scope,
  table: TableName,
  columns: readonly string[],
  values: readonly (readonly unknown[])[],
  suffix: string,
): Promise<Row[]> {
  if (values.length === 0) return [];
  const ownerColumn = OWNER_COLUMNS[table];
  const ownerIndex = ownerColumn === null ? -1 : columns.indexOf(ownerColumn);
  if (ownerColumn !== null && ownerIndex < 0) {
    throw new Error(`an insert into ${table} must name its owner column ${ownerColumn}`);
  }
  // The scope rule once per distinct owner, not once per row: a batch is one owner's rows.
  const owners = new Set(values.map((row) => row[ownerIndex]));
  assertRowsInScope(
    table,
    [...owners].map((owner) => (ownerColumn === null ? {} : { [ownerColumn]: owner })),
    scope,
  );
  const row = `(${columns.map(() => '?').join(', ')})`;
  const sql = `INSERT INTO "${table}" (${columns.map((column) => `"${column}"`).join(', ')}) VALUES ${Array.from(
    { length: values.length },
    () => row,
  ).join(', ')} ${suffix}`;
  const bindings: Knex.RawBinding[] = [];
  for (const rowValues of values) {
    if (rowValues.length !== columns.length)
      throw new Error(`an insert into ${table} needs ${columns.length} values a row`);
    for (const value of rowValues) bindings.push(value as Knex.RawBinding);
  }
  return raw(sql, bindings);
}
