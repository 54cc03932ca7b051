import { setTimeout as sleep } from 'node:timers/promises';
import type { Scope } from '@trellis/core';
import knexFactory, { type Knex } from 'knex';
import type pg from 'pg';
import { toDomainError } from '../../errors.js';
import { knexLog } from '../../knexLog.js';
import { type PoolStats, PoolWatch } from '../../PoolWatch.js';
import { migrateToLatest, pendingMigrations } from '../../migrations/migrationSource.js';
import type { TrellisMigration } from '../../migrations/TrellisMigration.js';
import type { SqlStoreLogger } from '../../openSqlStore.js';
import { ACTOR_SETTING, APP_ROLE, OWNER_SETTING } from '../../schema.js';
import type { Dialect, SqlSession, TransactionMode } from '../Dialect.js';
import { PostgresSession } from './PostgresSession.js';
import { classifyPostgresFailure } from './postgresErrors.js';
import { runTransaction } from './pgTransaction.js';

export interface PostgresOptions {
  logger: SqlStoreLogger;
  /** What `migrate()` applies, in order. */
  migrations: readonly TrellisMigration[];
  /** Most connections the pool opens (at least 2: a migration holds one for its lock). */
  poolSize: number;
  /** How long to wait for a connection, new or from the pool. */
  connectTimeoutMs: number;
  /** How long `migrate()` waits for another process's migration. */
  lockWaitMs: number;
}

/** The session-level advisory lock that serialises migrations of one database. */
const MIGRATION_LOCK_KEY = 1_953_656_947_001; // "trls" namespace, lock 1

/**
 * Postgres through pg. One `pg.Pool` holds the connections: the dialect takes them for units of
 * work (READ COMMITTED transactions it begins and ends itself, so BEGIN carries the scope's
 * settings), and knex, handed the same pool through its public `connectionPool` option, takes
 * them for migrations; knex otherwise only builds queries, run on a unit of work's connection
 * with `.connection()`. Owner- and member-scoped units of work first switch to the `trellis_app`
 * role and name the owner and the actor, so row-level security (m010) binds them even when the
 * connection logs in as a superuser (DESIGN §5).
 */
export class PostgresDialect implements Dialect {
  readonly name = 'postgres';
  private readonly poolWatch: PoolWatch;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly knex: Knex,
    private readonly pool: pg.Pool,
    private readonly options: PostgresOptions,
    private readonly quote: (value: string) => string,
  ) {
    this.poolWatch = new PoolWatch(() => ({
      used: pool.totalCount - pool.idleCount,
      free: pool.idleCount,
      pendingAcquires: pool.waitingCount,
    }));
  }

  /** A connection of the pool, its wait counted; the caller releases it. */
  private connect(): Promise<pg.PoolClient> {
    return this.poolWatch.acquire(() => this.pool.connect());
  }

  poolStats(): PoolStats {
    return this.poolWatch.stats();
  }

  static async open(url: string, options: PostgresOptions): Promise<PostgresDialect> {
    const driver = await import('pg');
    const { Pool, escapeLiteral } = driver.default ?? driver;
    // connectionTimeoutMillis bounds both a new connection and the wait for a pooled one.
    const pool = new Pool({
      connectionString: url,
      connectionTimeoutMillis: options.connectTimeoutMs,
      max: Math.max(2, options.poolSize),
    });
    // An idle connection that fails (a restart of the database) leaves the pool; without a
    // listener pg's 'error' event would end the process.
    pool.on('error', (error) => options.logger.warn(`a pooled database connection failed: ${error.message}`));
    // pg's pool listens for the errors of idle connections only. One lent out (a unit of work
    // between two statements) that the server ends would otherwise emit an unheard 'error' and end
    // the process; heard here, it surfaces as the failure of that unit of work's next statement.
    pool.on('connect', (client) => client.on('error', () => {}));
    const knex = knexFactory({ client: 'pg', connectionPool: pool, log: knexLog(options.logger) });
    return new PostgresDialect(knex, pool, options, escapeLiteral);
  }

  async transaction<T>(
    scope: Scope,
    work: (session: SqlSession) => Promise<T>,
    mode: TransactionMode = 'write',
  ): Promise<T> {
    return runTransaction(
      () => this.connect(),
      { readOnly: mode === 'read', setup: this.scopeSetup(scope) },
      (client) => work(new PostgresSession(this.knex, client, scope)),
    );
  }

  /**
   * Row-level security (m010) reads two settings: the owner (empty in a member scope) and the
   * actor, the person at work (or the owner acting itself), under the `trellis_app` role. Set
   * transaction-local (is_local = true), they end with the transaction, so a pooled connection
   * never carries one unit of work's identity into the next. Sent with BEGIN, in its round trip
   * (`runTransaction`), so the values are quoted literals, not parameters. System work: none.
   */
  private scopeSetup(scope: Scope): string | null {
    if (scope.kind === 'system') return null;
    const [owner, actor] =
      scope.kind === 'owner' ? [scope.ownerId, scope.actorId ?? scope.ownerId] : ['', scope.userId];
    const settings: Array<[string, string]> = [
      ['role', APP_ROLE],
      [OWNER_SETTING, owner],
      [ACTOR_SETTING, actor],
    ];
    return `SELECT ${settings.map(([name, value]) => `set_config(${this.quote(name)}, ${this.quote(value)}, true)`).join(', ')}`;
  }

  /**
   * Replicas may start together: each takes a session-level advisory lock on a connection of its
   * own and holds it while knex migrates on others, so one migrates and the rest then find
   * nothing to do. Waiting is bounded by `lockWaitMs`.
   */
  async migrate(): Promise<void> {
    const connection = await this.connect();
    let usable = true;
    try {
      await this.takeMigrationLock(connection);
      try {
        await migrateToLatest(this.knex, 'postgres', this.options.migrations, this.options.logger);
      } finally {
        usable = await this.releaseMigrationLock(connection);
      }
    } finally {
      connection.release(!usable);
    }
  }

  /**
   * False when the unlock failed: a session lock ends with its connection, so that connection is
   * destroyed rather than pooled, and the lock goes with it.
   */
  private async releaseMigrationLock(connection: pg.PoolClient): Promise<boolean> {
    try {
      await connection.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      return true;
    } catch (error) {
      this.options.logger.warn(`could not release the migration lock: ${(error as Error).message}`);
      return false;
    }
  }

  pendingMigrations(): Promise<string[]> {
    return pendingMigrations(this.knex, 'postgres', this.options.migrations);
  }

  async ping(): Promise<void> {
    const connection = await this.connect();
    let failure: Error | undefined;
    try {
      await connection.query('select 1');
    } catch (error) {
      failure = error as Error;
      throw error;
    } finally {
      connection.release(failure);
    }
  }

  translate(error: unknown): unknown {
    return toDomainError(error, classifyPostgresFailure(error));
  }

  /** knex leaves a pool it was handed open: the pool ends once its connections are back. */
  close(): Promise<void> {
    this.closing ??= this.knex.destroy().then(() => this.pool.end());
    return this.closing;
  }

  private async takeMigrationLock(connection: pg.PoolClient): Promise<void> {
    const deadline = Date.now() + this.options.lockWaitMs;
    for (;;) {
      const result = await connection.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
        MIGRATION_LOCK_KEY,
      ]);
      if (result.rows[0]?.locked) return;
      if (Date.now() >= deadline) {
        throw new Error(
          `another process kept the migration lock for over ${Math.round(this.options.lockWaitMs / 1000)} s; ` +
            'is a migration stuck?',
        );
      }
      await sleep(100 + Math.random() * 100);
    }
  }
}
