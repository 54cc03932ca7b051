import { type ConfigSnapshot, summarizeSnapshot } from '@trellis/core';
import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { APP_ROLE, OWNER_SETTING } from '../schema.js';
import type { TrellisMigration } from './TrellisMigration.js';

const BATCH = 200;

/**
 * Lists page and carry summaries (issue 10 §2).
 *
 * Keyset pagination: each list reads newest first by (time, seq) after a cursor, within its owner
 * and filter; these indexes let a page be read from the cursor on instead of sorting every row of
 * the owner. Vineyards, vines and workers have (owner_id, created_at, seq) since migration 001,
 * releases (published_at, seq).
 *
 * Snapshots once: a job's full configuration snapshot (inline files of megabytes included) is
 * kept once per (owner, config_hash) in `config_snapshots`, instead of a copy per job; the job
 * row keeps its summary (no files, no variables), which is all a list reads. A snapshot is owner
 * data: the owner is part of the key and, on Postgres, row-level security isolates it like every
 * other owned table (the same hash under two owners is two rows, each visible to its owner only).
 * Existing jobs move their snapshot there and keep their summary.
 */
export const paginationSnapshotsMigration: TrellisMigration = {
  name: '006_pagination_snapshots',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    const isPostgres = dialect === 'postgres';
    await knex.schema.alterTable('jobs', (t) => {
      t.index(['owner_id', 'created_at', 'seq'], 'jobs_owner_created_idx');
      t.index(['owner_id', 'status', 'created_at', 'seq'], 'jobs_owner_status_created_idx');
      t.index(['owner_id', 'vineyard_id', 'created_at', 'seq'], 'jobs_owner_vineyard_created_idx');
      t.index(['owner_id', 'vine_id', 'created_at', 'seq'], 'jobs_owner_vine_created_idx');
    });

    await knex.schema.createTable('config_snapshots', (t) => {
      t.uuid('owner_id').notNullable().references('id').inTable('users');
      t.text('config_hash').notNullable();
      t.specificType('snapshot', isPostgres ? 'jsonb' : 'text').notNullable();
      t.primary(['owner_id', 'config_hash'], 'config_snapshots_pkey');
    });
    if (isPostgres) {
      await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON config_snapshots TO ${APP_ROLE}`);
      await knex.raw('ALTER TABLE config_snapshots ENABLE ROW LEVEL SECURITY');
      const currentOwner = `nullif(current_setting('${OWNER_SETTING}', true), '')::uuid`;
      await knex.raw(`
        CREATE POLICY config_snapshots_owner_isolation ON config_snapshots TO ${APP_ROLE}
          USING (owner_id = ${currentOwner})
          WITH CHECK (owner_id = ${currentOwner})`);
    }

    // Existing jobs: the snapshot moves (once per owner and hash), the summary stays.
    let after = 0;
    for (;;) {
      const rows: { seq: number | string; owner_id: string; config_hash: string; config_snapshot: unknown }[] =
        await knex('jobs')
          .where('seq', '>', after)
          .orderBy('seq')
          .limit(BATCH)
          .select('seq', 'owner_id', 'config_hash', 'config_snapshot');
      if (rows.length === 0) break;
      for (const row of rows) {
        const snapshot = (
          typeof row.config_snapshot === 'string' ? JSON.parse(row.config_snapshot) : row.config_snapshot
        ) as ConfigSnapshot;
        await knex('config_snapshots')
          .insert({ owner_id: row.owner_id, config_hash: row.config_hash, snapshot: JSON.stringify(snapshot) })
          .onConflict(['owner_id', 'config_hash'])
          .ignore();
        await knex('jobs')
          .where('seq', row.seq)
          .update({ config_snapshot: JSON.stringify(summarizeSnapshot(snapshot)) });
        after = Number(row.seq);
      }
    }
  },
};
