import { canonicalJson, JOB_RESULT_FIELDS, type JsonObject, keepWellFormedResults } from '@trellis/core';
import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { jsonIn, jsonOut } from '../rows.js';
import type { TrellisMigration } from './TrellisMigration.js';

const BATCH = 500;

/**
 * The agent's known results are typed from issue 24 on: core judges them when the agent reports
 * them, and every reader reads them as judged. Jobs reported before were not judged: a known
 * result of the wrong shape (no agent of Trellis sent one; only a hand-made report could) is left
 * out of the job's `execution_metadata`, a list keeps its well-formed entries, as the readers of
 * old showed them. Only rows that name a known result are read; data only, no schema change.
 */
export const typedJobResultsMigration: TrellisMigration = {
  name: '025_typed_job_results',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const text = dialect === 'postgres' ? 'execution_metadata::text' : 'execution_metadata';
    const namesAResult = JOB_RESULT_FIELDS.map(() => `${text} LIKE ?`).join(' OR ');
    const patterns = JOB_RESULT_FIELDS.map((field) => `%"${field}"%`);
    let after = 0;
    for (;;) {
      const rows: { seq: number | string; id: string; execution_metadata: unknown }[] = await knex('jobs')
        .select('seq', 'id', 'execution_metadata')
        .where('seq', '>', after)
        .whereRaw(`(${namesAResult})`, patterns)
        .orderBy('seq')
        .limit(BATCH);
      for (const row of rows) {
        const stored = jsonOut<JsonObject>(row.execution_metadata);
        const kept = keepWellFormedResults(stored);
        if (canonicalJson(kept) !== canonicalJson(stored)) {
          await knex('jobs')
            .where({ id: row.id })
            .update({ execution_metadata: jsonIn(kept) });
        }
      }
      if (rows.length < BATCH) return;
      after = Number(rows[rows.length - 1]?.seq);
    }
  },
};
