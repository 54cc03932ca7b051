import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type HeartbeatWrite, type JobClaimMove, type Scope, UnavailableError } from '@trellis/core';
import knexFactory, { type Knex } from 'knex';
import { toDomainError } from '../../errors.js';
import { knexLog } from '../../knexLog.js';
import { type PoolStats, PoolWatch } from '../../PoolWatch.js';
import { migrateToLatest, pendingMigrations } from '../../migrations/migrationSource.js';
import type { TrellisMigration } from '../../migrations/TrellisMigration.js';
import type { SqlStoreLogger } from '../../openSqlStore.js';
import { type Row, timeIn } from '../../rows.js';
import { MIGRATIONS_TABLE, type TableName } from '../../schema.js';
import { type ClaimedRows, type Dialect, type SqlSession, sqlName, type TransactionMode } from '../Dialect.js';
import { insertValues } from '../insertValues.js';
import { assertRowsInScope, restrictToScope } from '../scoping.js';
import { AsyncMutex } from './AsyncMutex.js';
import { claimNextSqliteJob } from './sqliteClaim.js';
import { type SqliteConnection, SingleConnectionPool } from './SqliteConnection.js';
import { cacheStatements } from './statementCache.js';
import { classifySqliteFailure, isSqliteBusy } from './sqliteErrors.js';

export interface SqliteOptions {
  logger: SqlStoreLogger;
  /** What `migrate()` applies, in order. */
  migrations: readonly TrellisMigration[];
  /** How long SQLite itself waits for another process's lock before answering SQLITE_BUSY. */
  busyTimeoutMs: number;
  /** How long a unit of work or a migration keeps retrying a busy database before giving up. */
  lockWaitMs: number;
}

/**
 * `sql` run with `bindings` on a statement the connection's cache (`cacheStatements`) prepared
 * once: compiling a 100-row INSERT costs more than running it. Bindings as knex gives them
 * (booleans as 0/1).
 */
function runPrepared(connection: SqliteConnection, sql: string, bindings: readonly unknown[]): Row[] {
  const statement = connection.prepare(sql);
  const values = bindings.map((value) => (typeof value === 'boolean' ? Number(value) : value));
  if (statement.reader) return statement.all(values);
  statement.run(values);
  return [];
}

/** The connections in `query_only` now (a new connection is not). */
const QUERY_ONLY = new WeakSet<SqliteConnection>();

/**
 * SQLite through better-sqlite3: one connection per process, behind a mutex, so a unit of work
 * has the connection to itself. Each one starts with BEGIN IMMEDIATE: knex's deferred BEGIN takes
 * the write lock only at the first write, and a transaction that read first then cannot upgrade
 * when another process wrote meanwhile (SQLITE_BUSY without waiting). Taking the write lock up
 * front makes units of work queue instead, across processes too. WAL keeps readers of other
 * processes unblocked.
 */
export class SqliteDialect implements Dialect {
  readonly name = 'sqlite';
  private readonly poolWatch: PoolWatch;
  /** Units of work (and migrations, pings) holding the connection now, and waiting for it. */
  private holding = 0;
  private waiting = 0;

  constructor(
    private readonly knex: Knex,
    /** The one connection, which knex borrows too (its `connectionPool`). */
    private readonly pool: SingleConnectionPool,
    private readonly options: SqliteOptions,
    /** Shared by every store of this process on the same file (see `mutexFor`). */
    private readonly mutex: AsyncMutex,
  ) {
    // The mutex is the queue for the connection: its wait is what a pool's acquisition would be.
    this.poolWatch = new PoolWatch(() => ({
      used: this.holding,
      free: 1 - this.holding,
      pendingAcquires: this.waiting,
    }));
  }

  poolStats(): PoolStats {
    return this.poolWatch.stats();
  }

  /** `location` is a file path (relative to the working directory) or `:memory:`. */
  static async open(location: string, options: SqliteOptions): Promise<SqliteDialect> {
    const filename = location === ':memory:' ? location : resolve(location);
    if (filename !== ':memory:') {
      try {
        await mkdir(dirname(filename), { recursive: true });
      } catch (cause) {
        throw new UnavailableError(
          'database_unavailable',
          `cannot create the directory of the SQLite database (${(cause as { code?: string }).code ?? 'error'})`,
          { cause },
        );
      }
    }
    const { default: Database } = await import('better-sqlite3');
    const pool = new SingleConnectionPool(() => {
      const connection = new Database(filename);
      try {
        // busy_timeout first: switching to WAL needs a lock another process may hold.
        connection.pragma(`busy_timeout = ${Math.round(options.busyTimeoutMs)}`);
        connection.pragma('journal_mode = WAL');
        // In WAL mode NORMAL never corrupts the database; a power cut may lose the last commits.
        connection.pragma('synchronous = NORMAL');
        connection.pragma('foreign_keys = ON');
        cacheStatements(connection);
        return connection as unknown as SqliteConnection;
      } catch (error) {
        connection.close();
        throw error;
      }
    });
    const knex = knexFactory({
      client: 'better-sqlite3',
      connectionPool: pool,
      useNullAsDefault: true,
      log: knexLog(options.logger),
    });
    return new SqliteDialect(knex, pool, options, filename === ':memory:' ? new AsyncMutex() : mutexFor(filename));
  }

  /**
   * Runs `task` with the connection to itself: after the mutex (this process's other units of
   * work, on any store of the file), its wait counted as a pool's acquisition would be.
   */
  private async exclusive<T>(task: (connection: SqliteConnection) => Promise<T>, readOnly = false): Promise<T> {
    const release = await this.poolWatch.acquire(async () => {
      this.waiting += 1;
      try {
        return await this.mutex.lock();
      } finally {
        this.waiting -= 1;
      }
    });
    this.holding += 1;
    try {
      const connection = this.pool.connection();
      this.queryOnly(connection, readOnly);
      return await task(connection);
    } finally {
      this.holding -= 1;
      release();
    }
  }

  /**
   * SQLite has no roles: the session's own owner filters are what keep owners apart here. A read
   * transaction is DEFERRED under `query_only`: it takes only a read snapshot (WAL), so it neither
   * waits for another process's writer nor blocks one, and a write in it fails.
   */
  async transaction<T>(
    scope: Scope,
    work: (session: SqlSession) => Promise<T>,
    mode: TransactionMode = 'write',
  ): Promise<T> {
    return this.exclusive(async (connection) => {
      if (mode === 'read') connection.exec('BEGIN DEFERRED');
      else await this.beginImmediate(connection);
      try {
        const result = await work(new SqliteSession(this.knex, connection, scope));
        connection.exec('COMMIT');
        return result;
      } catch (error) {
        rollBack(connection);
        throw error;
      }
    }, mode === 'read');
  }

  /**
   * Puts the connection in `query_only` for a read unit of work and out of it for anything else.
   * The connection is shared by every unit of work of the process, one at a time: it is switched
   * only when the next one needs the other mode (most requests read, read, read), not twice each.
   */
  private queryOnly(connection: SqliteConnection, on: boolean): void {
    if (QUERY_ONLY.has(connection) === on) return;
    connection.pragma(`query_only = ${on ? 'ON' : 'OFF'}`);
    if (on) QUERY_ONLY.add(connection);
    else QUERY_ONLY.delete(connection);
  }

  /**
   * Several processes may start on one file together. knex's lock row serialises their batches,
   * but knex creates its bookkeeping tables and that lock row outside any transaction, where two
   * processes can insert two lock rows and lock each other out forever; so we create them first,
   * atomically. A process that finds the database busy waits and tries again.
   */
  async migrate(): Promise<void> {
    await this.exclusive(async (connection) => {
      const deadline = Date.now() + this.options.lockWaitMs;
      for (let attempt = 0; ; attempt += 1) {
        try {
          await this.createMigrationTables(connection);
          await migrateToLatest(this.knex, 'sqlite', this.options.migrations, this.options.logger);
          return;
        } catch (error) {
          const contended = isSqliteBusy(error) || (error instanceof Error && error.name === 'MigrationLocked');
          if (!contended || Date.now() >= deadline) throw error;
          await sleep(backoffMs(attempt));
        }
      }
    });
  }

  pendingMigrations(): Promise<string[]> {
    return this.exclusive(() => pendingMigrations(this.knex, 'sqlite', this.options.migrations));
  }

  async ping(): Promise<void> {
    await this.exclusive(async (connection) => connection.prepare('select 1').all([]));
  }

  translate(error: unknown): unknown {
    return toDomainError(error, classifySqliteFailure(error));
  }

  /** Once the running units of work have finished (knex leaves a pool it was handed open). */
  async close(): Promise<void> {
    await this.mutex.runExclusive(async () => {
      await this.knex.destroy();
      this.pool.close();
    });
  }

  /** busy_timeout already waits inside SQLite; past it, back off and retry up to `lockWaitMs`. */
  private async beginImmediate(connection: SqliteConnection): Promise<void> {
    const deadline = Date.now() + this.options.lockWaitMs;
    for (let attempt = 0; ; attempt += 1) {
      try {
        connection.exec('BEGIN IMMEDIATE');
        return;
      } catch (error) {
        if (!isSqliteBusy(error) || Date.now() >= deadline) throw error;
        await sleep(backoffMs(attempt));
      }
    }
  }

  /** What knex's migrator would create (same columns), but in one immediate transaction. */
  private async createMigrationTables(connection: SqliteConnection): Promise<void> {
    await this.beginImmediate(connection);
    try {
      connection.exec(`
        CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (
          "id" integer not null primary key autoincrement,
          "name" varchar(255),
          "batch" integer,
          "migration_time" datetime);
        CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}_lock" (
          "index" integer not null primary key autoincrement,
          "is_locked" integer);
        INSERT INTO "${MIGRATIONS_TABLE}_lock" ("is_locked")
          SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM "${MIGRATIONS_TABLE}_lock");
        COMMIT;`);
    } catch (error) {
      rollBack(connection);
      throw error;
    }
  }
}

/** Ends a failed transaction; a failure to do so must not hide the error that caused it. */
function rollBack(connection: SqliteConnection): void {
  try {
    if (connection.inTransaction) connection.exec('ROLLBACK');
  } catch {
    // SQLite rolls back by itself when the connection closes; the first error is the one to report.
  }
}

/**
 * One mutex per database file and process. better-sqlite3 waits for locks synchronously, blocking
 * the event loop: if two stores of one process used the same file, one could wait inside SQLite
 * for a lock the other holds but cannot release until the event loop runs again. Queuing them on
 * one mutex means that never happens; processes still wait for each other inside SQLite.
 */
const FILE_MUTEXES = new Map<string, AsyncMutex>();
function mutexFor(filename: string): AsyncMutex {
  let mutex = FILE_MUTEXES.get(filename);
  if (!mutex) {
    mutex = new AsyncMutex();
    FILE_MUTEXES.set(filename, mutex);
  }
  return mutex;
}

/** Exponential from 5 ms, capped at 200 ms, with jitter so waiting processes spread out. */
function backoffMs(attempt: number): number {
  return Math.min(200, 5 * 2 ** attempt) * (0.5 + Math.random());
}

class SqliteSession implements SqlSession {
  constructor(
    private readonly knex: Knex,
    private readonly connection: SqliteConnection,
    readonly scope: Scope,
  ) {}

  table(name: TableName): Knex.QueryBuilder {
    return restrictToScope(this.knex(name).connection(this.connection), name, this.scope);
  }

  unscoped(name: TableName): Knex.QueryBuilder {
    return this.knex(name).connection(this.connection);
  }

  insert(name: TableName, rows: Row | Row[]): Knex.QueryBuilder {
    assertRowsInScope(name, rows, this.scope);
    return this.knex(name).connection(this.connection).insert(rows);
  }

  insertValues(
    name: TableName,
    columns: readonly string[],
    values: readonly (readonly unknown[])[],
    suffix: string,
  ): Promise<Row[]> {
    return insertValues(
      async (sql, bindings) => runPrepared(this.connection, sql, bindings),
      this.scope,
      name,
      columns,
      values,
      suffix,
    );
  }

  async raw(sql: string, bindings: readonly Knex.RawBinding[] | Knex.ValueDict = []): Promise<Row[]> {
    const rows: Row[] = await this.knex.raw(sql, bindings).connection(this.connection);
    return rows;
  }

  lockSkipLocked(query: Knex.QueryBuilder): Knex.QueryBuilder {
    return query;
  }

  lockForUpdate(query: Knex.QueryBuilder): Knex.QueryBuilder {
    return query;
  }

  lockSkippingLocked(query: Knex.QueryBuilder): Knex.QueryBuilder {
    return query;
  }

  recoverable<T>(statement: (session: SqlSession) => Promise<T>): Promise<T> {
    return statement(this);
  }

  whereJsonArrayHas(query: Knex.QueryBuilder, column: string, value: string): Knex.QueryBuilder {
    return query.whereRaw(`EXISTS (SELECT 1 FROM json_each("${sqlName(column)}") WHERE json_each.value = ?)`, [value]);
  }

  claimNextJob(workerId: string, at: string, move: JobClaimMove): Promise<ClaimedRows | undefined> {
    return claimNextSqliteJob(this, workerId, at, move);
  }

  async recordHeartbeats(beats: readonly HeartbeatWrite[]): Promise<void> {
    for (const beat of beats) {
      const at = timeIn(beat.at);
      await this.table('workers')
        .where({ id: beat.worker_id })
        .where((earlier) => earlier.whereNull('last_heartbeat').orWhere('last_heartbeat', '<', at))
        .update({ last_heartbeat: at, version: beat.version });
    }
  }
}
