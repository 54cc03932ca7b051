/**
 * `SqlSession.insertValues`, the builder-free INSERT of the hot log-ingest path: values are bound,
 * never spliced into the statement, and owner work may not write another owner's rows.
 */
import { ownerScope, systemScope } from '@trellis/core';
import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { insertValues } from '../src/dialects/insertValues.js';
import type { Row } from '../src/rows.js';

const OWNER = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const JOB = '33333333-3333-4333-8333-333333333333';

function recorder() {
  const calls: Array<{ sql: string; bindings: readonly Knex.RawBinding[] }> = [];
  const raw = async (sql: string, bindings: readonly Knex.RawBinding[]): Promise<Row[]> => {
    calls.push({ sql, bindings });
    return [{ id: 1 }];
  };
  return { calls, raw };
}

describe('insertValues', () => {
  it('binds every value, the text holding only placeholders, and returns what RETURNING gives', async () => {
    const { calls, raw } = recorder();
    const hostile = "x'); DROP TABLE jobs; --";
    const rows = await insertValues(
      raw,
      ownerScope(OWNER),
      'log_chunks',
      ['job_id', 'owner_id', 'log_chunk'],
      [
        [JOB, OWNER, hostile],
        [JOB, OWNER, 'two'],
      ],
      'RETURNING id',
    );
    expect(rows).toEqual([{ id: 1 }]);
    expect(calls).toEqual([
      {
        sql: 'INSERT INTO "log_chunks" ("job_id", "owner_id", "log_chunk") VALUES (?, ?, ?), (?, ?, ?) RETURNING id',
        bindings: [JOB, OWNER, hostile, JOB, OWNER, 'two'],
      },
    ]);
  });

  it('refuses, in owner scope, a row of another owner or a row that names no owner, before any SQL', async () => {
    const { calls, raw } = recorder();
    await expect(
      insertValues(
        raw,
        ownerScope(OWNER),
        'log_chunks',
        ['job_id', 'owner_id'],
        [
          [JOB, OWNER],
          [JOB, OTHER],
        ],
        '',
      ),
    ).rejects.toThrow(/another owner/);
    await expect(insertValues(raw, ownerScope(OWNER), 'log_chunks', ['job_id'], [[JOB]], '')).rejects.toThrow(
      /owner column owner_id/,
    );
    await expect(
      insertValues(raw, ownerScope(OWNER), 'log_chunks', ['job_id', 'owner_id'], [[JOB, OWNER, 'extra']], ''),
    ).rejects.toThrow(/2 values a row/);
    expect(calls).toEqual([]);
    // System work writes any owner's rows, as `insert` lets it.
    await insertValues(raw, systemScope, 'log_chunks', ['job_id', 'owner_id'], [[JOB, OTHER]], '');
    expect(calls).toHaveLength(1);
  });
});
