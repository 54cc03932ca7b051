import type { PoolStats } from '../PoolWatch.js';
import type { HeartbeatWrite, JobClaimMove, Scope } from '@trellis/core';
import type { Knex } from 'knex';
import type { Row } from '../rows.js';
import type { TableName } from '../schema.js';

export type DialectName = 'sqlite' | 'postgres';

/** `read`: the unit of work only reads, so the database may run it without a write lock. */
export type TransactionMode = 'read' | 'write';

/**
 * One unit of work's view of the database: every query it builds runs in that unit of work's
 * transaction. Everything the stores need that differs between the dialects is here, so the
 * stores themselves never ask which database they are on.
 */
export interface SqlSession {
  /**
   * A query on `table`, bound to the transaction and, in an owner-scoped unit of work, narrowed to
   * the owner's rows (dialects/scoping.ts). For reads, updates and deletes; inserts use `insert`.
   */
  table(name: TableName): Knex.QueryBuilder;
  /**
   * A query on `table` NOT narrowed to the scope's owners, for the few reads and writes that cross
   * owners by design (a person's own memberships, which belong to their organizations). The store
   * that uses it applies the rule itself; on Postgres row-level security still binds it.
   */
  unscoped(name: TableName): Knex.QueryBuilder;
  /** An INSERT of `rows` into `table`; in owner scope, refused for rows of another owner. */
  insert(name: TableName, rows: Row | Row[]): Knex.QueryBuilder;
  /**
   * One multi-row INSERT of `values` (one array per row, in `columns` order) followed by `suffix`
   * (`ON CONFLICT …`, `RETURNING …`), without the query builder: for the hottest statements, where
   * building the query costs more than running it. Values are bound, never part of the text. In
   * owner scope, refused for rows of another owner, as `insert`. Returns the rows RETURNING gives.
   */
  insertValues(
    name: TableName,
    columns: readonly string[],
    values: readonly (readonly unknown[])[],
    suffix: string,
  ): Promise<Row[]>;
  /** Raw SQL in the transaction; the rows it returns, whatever the driver's result shape. */
  raw(sql: string, bindings?: readonly Knex.RawBinding[] | Knex.ValueDict): Promise<Row[]>;
  /**
   * Locks the rows `query` selects for a claim, skipping those another transaction holds
   * (Postgres `FOR UPDATE SKIP LOCKED`; SQLite's writers are serialised already).
   */
  lockSkippingLocked(query: Knex.QueryBuilder): Knex.QueryBuilder;
  /**
   * Locks the rows the query reads until the unit of work ends (Postgres `FOR UPDATE`; with `of`,
   * only those tables' rows, as a query that outer-joins a table it does not lock needs). On
   * SQLite the unit of work already holds the database's write lock, so there is nothing to add.
   */
  lockForUpdate(query: Knex.QueryBuilder, ...of: string[]): Knex.QueryBuilder;
  /**
   * Like `lockForUpdate`, but rows another transaction holds are skipped rather than waited for
   * (Postgres `FOR UPDATE SKIP LOCKED`): concurrent callers each take different rows.
   */
  lockSkipLocked(query: Knex.QueryBuilder): Knex.QueryBuilder;
  /**
   * Runs a statement that may break a unique key so that its failure leaves the unit of work
   * usable: Postgres aborts the whole transaction on any error unless it ran under a savepoint;
   * SQLite only undoes the failed statement anyway.
   */
  recoverable<T>(statement: (session: SqlSession) => Promise<T>): Promise<T>;
  /**
   * Takes the next job the worker may run, per DESIGN §3 and `JobStore.claimNext` (the rule is
   * spelled out where each dialect implements it), moves it and its vine as `move` says (core's
   * `JOB_CLAIM`: the statuses are core's, never the SQL's), and returns the rows the claim's
   * answer needs. On Postgres that is one statement.
   */
  claimNextJob(workerId: string, at: string, move: JobClaimMove): Promise<ClaimedRows | undefined>;
  /**
   * Writes agents' heartbeats, each only where the stored one is earlier (`WorkerStore.recordHeartbeats`):
   * one multi-row `UPDATE … FROM (VALUES …)` on Postgres, one `UPDATE` per worker on SQLite (in this
   * transaction, so one commit either way).
   */
  recordHeartbeats(beats: readonly HeartbeatWrite[]): Promise<void>;
  /** Narrows `query` to rows whose JSON array of strings in `column` holds `value`. */
  whereJsonArrayHas(query: Knex.QueryBuilder, column: string, value: string): Knex.QueryBuilder;
  /** The scope of the unit of work. */
  readonly scope: Scope;
}

/** A column name the store writes into SQL: its own constants only. */
export function sqlName(name: string): string {
  if (!/^[a-z_]+$/.test(name)) throw new TypeError(`not a column or key name: ${name}`);
  return name;
}

/** What a claim took and read: rows as the driver returns them. */
export interface ClaimedRows {
  /** The claimed `jobs` row. */
  job: Row;
  /** Its full snapshot (`config_snapshots.snapshot`), undefined if missing. */
  snapshot: unknown;
  /** The vine's status before and after the claim; null when the claim left no vine to move. */
  vine: { before: string; after: string } | null;
  /** The `cloud_identities` row of the job, or null. */
  cloudIdentity: Row | null;
  /** The `vineyards` row of the job, or null. */
  vineyard: Row | null;
}

/** What one database engine provides to the rest of the package. */
export interface Dialect {
  readonly name: DialectName;
  /**
   * Runs `work` in one transaction, scoped as the port describes; commits if it resolves. A
   * `read` transaction is read-only and takes no write lock (`UnitOfWork.read`).
   */
  transaction<T>(scope: Scope, work: (session: SqlSession) => Promise<T>, mode?: TransactionMode): Promise<T>;
  /** Applies pending migrations, waiting for any other process that is migrating the database. */
  migrate(): Promise<void>;
  /** The names of the migrations `migrate()` would apply, in order; changes nothing. */
  pendingMigrations(): Promise<string[]>;
  /** A round trip to the database. */
  ping(): Promise<void>;
  /**
   * The error a caller should see for `error`: a domain error for constraint and connection
   * failures, the error unchanged when it is already a domain error or a bug (bad SQL).
   */
  translate(error: unknown): unknown;
  /** The connection pool now, and the time acquisitions waited so far. */
  poolStats(): PoolStats;
  close(): Promise<void>;
}
