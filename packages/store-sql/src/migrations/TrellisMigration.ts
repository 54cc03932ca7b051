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
  /** Runs in the migration batch's transaction (`knex` is that transaction) unless `transactional` says not. */
  up(knex: Knex, dialect: DialectName): Promise<void>;
}
