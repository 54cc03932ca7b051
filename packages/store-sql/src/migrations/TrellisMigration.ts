import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';

/**
 * A migration, defined in code (never loaded from disk by glob, so bundlers and embedding apps
 * need nothing but this package). Migrations are forward-only and frozen once released: a change
 * is a new migration.
 */
export interface TrellisMigration {
  /** Recorded in `trellis_migrations`; sorts in the order the migrations apply. */
  name: string;
  /**
   * Whether knex runs `up` in a transaction (the default). A migration that must run statements
   * outside any transaction (SQLite's `PRAGMA foreign_keys`) says false and opens its own.
   */
  transactional?(dialect: DialectName): boolean;
  /**
   * Set only on a contract step: a migration that takes away what an earlier release used
   * (drops or renames a table or column, changes a column's type, makes an existing column NOT
   * NULL without a default). Every other migration is additive (expand), so a replica of the
   * previous release keeps working beside it on the migrated database during a rolling upgrade.
   * A contract step ships at least one release after the one that stopped using what it takes
   * away; `reason` says which release that was and why nothing running still needs it.
   * (test/upgradeSafety.test.ts holds every migration from m020 on to this.)
   */
  contract?: { reason: string };
  /** Runs in the migration batch's transaction (`knex` is that transaction) unless `transactional` says not. */
  up(knex: Knex, dialect: DialectName): Promise<void>;
}
