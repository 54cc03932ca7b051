import { setTimeout as sleep } from 'node:timers/promises';
import type { HeartbeatWrite, JobClaimMove, Scope } from '@trellis/core';
import knexFactory, { type Knex } from 'knex';
import { toDomainError } from '../../errors.js';
import { knexLog } from '../../knexLog.js';
import { type PoolStats, PoolWatch } from '../../PoolWatch.js';
import { migrateToLatest, pendingMigrations } from '../../migrations/migrationSource.js';
import type { TrellisMigration } from '../../migrations/TrellisMigration.js';
import type { SqlStoreLogger } from '../../openSqlStore.js';
import { type Row, timeIn } from '../../rows.js';
import { ACTOR_SETTING, APP_ROLE, OWNER_SETTING, type TableName } from '../../schema.js';
import type { ClaimedRows, Dialect, SqlSession, TransactionMode } from '../Dialect.js';
import { insertValues } from '../insertValues.js';
import { assertRowsInScope, restrictToScope } from '../scoping.js';
import { classifyPostgresFailure } from './postgresErrors.js';
import { sendSetupWithBegin, withSetup } from './setupWithBegin.js';

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

/** knex's pool, which its public types leave untyped. */
interface ConnectionPool {
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<void>;
}

/**
 * Postgres through pg. Units of work are knex transactions (READ COMMITTED). Owner- and
 * member-scoped ones first switch to the `trellis_app` role and name the owner and the actor, so
 * row-level security (m010) binds them even when the connection logs in as a superuser (DESIGN §5).
 */
export class PostgresDialect implements Dialect {
  readonly name = 'postgres';
  private readonly pool: ConnectionPool;
  private readonly poolWatch: PoolWatch;

  constructor(
    private readonly knex: Knex,
    private readonly options: PostgresOptions,
    private readonly quote: (value: string) => string,
  ) {
    this.pool = knex.client as ConnectionPool;
    sendSetupWithBegin(knex);
    this.poolWatch = new PoolWatch(knex);
  }

  poolStats(): PoolStats {
    return this.poolWatch.stats();
  }

  static async open(url: string, options: PostgresOptions): Promise<PostgresDialect> {
    const knex = knexFactory({
      client: 'pg',
      connection: { connectionString: url, connectionTimeoutMillis: options.connectTimeoutMs },
      pool: { min: 0, max: Math.max(2, options.poolSize) },
      acquireConnectionTimeout: options.connectTimeoutMs,
      log: knexLog(options.logger),
    });
    const pg = await import('pg');
    return new PostgresDialect(knex, options, pg.default?.escapeLiteral ?? pg.escapeLiteral);
  }

  async transaction<T>(
    scope: Scope,
    work: (session: SqlSession) => Promise<T>,
    mode: TransactionMode = 'write',
  ): Promise<T> {
    return this.knex.transaction(
      (trx) => work(new PostgresSession(trx, scope)),
      withSetup({ readOnly: mode === 'read' }, this.scopeSetup(scope)),
    );
  }

  /**
   * Row-level security (m010) reads two settings: the owner (empty in a member scope) and the
   * actor, the person at work (or the owner acting itself), under the `trellis_app` role. Set
   * transaction-local (is_local = true), they end with the transaction, so a pooled connection
   * never carries one unit of work's identity into the next. Sent with BEGIN, in its round trip
   * (`sendSetupWithBegin`), so the values are quoted literals, not parameters. System work: none.
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
    const connection = await this.pool.acquireConnection();
    try {
      await this.takeMigrationLock(connection);
      try {
        await migrateToLatest(this.knex, 'postgres', this.options.migrations, this.options.logger);
      } finally {
        await this.knex.raw('SELECT pg_advisory_unlock(?)', [MIGRATION_LOCK_KEY]).connection(connection);
      }
    } finally {
      await this.pool.releaseConnection(connection);
    }
  }

  pendingMigrations(): Promise<string[]> {
    return pendingMigrations(this.knex, 'postgres', this.options.migrations);
  }

  async ping(): Promise<void> {
    await this.knex.raw('select 1');
  }

  translate(error: unknown): unknown {
    return toDomainError(error, classifyPostgresFailure(error));
  }

  async close(): Promise<void> {
    await this.knex.destroy();
  }

  private async takeMigrationLock(connection: unknown): Promise<void> {
    const deadline = Date.now() + this.options.lockWaitMs;
    for (;;) {
      const result: { rows: Array<{ locked: boolean }> } = await this.knex
        .raw('SELECT pg_try_advisory_lock(?) AS locked', [MIGRATION_LOCK_KEY])
        .connection(connection);
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

/** The claim and what its answer reads, in one round trip (m022). */
const CLAIM_STATEMENT = `
  SELECT (c.claimed_job).*,
    c.claimed_vine_before AS claim_vine_before,
    c.claimed_vine_after AS claim_vine_after,
    s.snapshot AS claim_snapshot,
    to_jsonb(ci) AS claim_cloud_identity,
    to_jsonb(vy) AS claim_vineyard
  FROM claim_next_job(?::uuid, ?::timestamptz, ?, ?, ?::jsonb, ARRAY(SELECT jsonb_array_elements_text(?::jsonb))) c
  LEFT JOIN LATERAL (
    SELECT s.snapshot FROM config_snapshots s
    WHERE s.owner_id = (c.claimed_job).owner_id AND s.config_hash = (c.claimed_job).config_hash) s ON true
  LEFT JOIN LATERAL (SELECT * FROM cloud_identities ci WHERE ci.id = (c.claimed_job).cloud_identity_id) ci ON true
  LEFT JOIN LATERAL (SELECT * FROM vineyards vy WHERE vy.id = (c.claimed_job).vineyard_id) vy ON true`;

/** Queries are narrowed to the scope here too: a second guard behind row-level security. */
class PostgresSession implements SqlSession {
  constructor(
    private readonly trx: Knex.Transaction,
    readonly scope: Scope,
  ) {}

  table(name: TableName): Knex.QueryBuilder {
    return restrictToScope(this.trx(name), name, this.scope);
  }

  unscoped(name: TableName): Knex.QueryBuilder {
    return this.trx(name);
  }

  insert(name: TableName, rows: Row | Row[]): Knex.QueryBuilder {
    assertRowsInScope(name, rows, this.scope);
    return this.trx(name).insert(rows);
  }

  insertValues(
    name: TableName,
    columns: readonly string[],
    values: readonly (readonly unknown[])[],
    suffix: string,
  ): Promise<Row[]> {
    return insertValues((sql, bindings) => this.raw(sql, bindings), this.scope, name, columns, values, suffix);
  }

  async raw(sql: string, bindings: readonly Knex.RawBinding[] | Knex.ValueDict = []): Promise<Row[]> {
    const result: { rows: Row[] } = await this.trx.raw(sql, bindings);
    return result.rows;
  }

  lockSkipLocked(query: Knex.QueryBuilder): Knex.QueryBuilder {
    return query.forUpdate().skipLocked();
  }

  lockForUpdate(query: Knex.QueryBuilder): Knex.QueryBuilder {
    return query.forUpdate();
  }

  lockSkippingLocked(query: Knex.QueryBuilder): Knex.QueryBuilder {
    return query.forUpdate().skipLocked();
  }

  /** A knex nested transaction is a SAVEPOINT; knex rolls back to it when `statement` throws. */
  recoverable<T>(statement: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.trx.transaction((savepoint) => statement(new PostgresSession(savepoint, this.scope)));
  }

  /**
   * One statement: m022's `claim_next_job` takes the job and moves its vine; the joins read what
   * the function does not change (the snapshot, the cloud identity, the vineyard), as JSON for
   * the rows whose columns would clash with the job's. The joins are LATERAL lookups by key: the
   * planner expects a set-returning function to return many rows and would otherwise hash every
   * snapshot, identity and vineyard of the owner to join the one claimed job.
   */
  async claimNextJob(workerId: string, at: string, move: JobClaimMove): Promise<ClaimedRows | undefined> {
    const [row] = await this.raw(CLAIM_STATEMENT, [
      workerId,
      at,
      move.from,
      move.to,
      JSON.stringify(move.vine),
      JSON.stringify(move.vineKeptBy),
    ]);
    if (!row) return undefined;
    const { claim_snapshot, claim_vine_before, claim_vine_after, claim_cloud_identity, claim_vineyard, ...job } = row;
    return {
      job,
      snapshot: claim_snapshot ?? undefined,
      vine:
        claim_vine_before === null ? null : { before: claim_vine_before as string, after: claim_vine_after as string },
      cloudIdentity: (claim_cloud_identity as Row | null) ?? null,
      vineyard: (claim_vineyard as Row | null) ?? null,
    };
  }

  async recordHeartbeats(beats: readonly HeartbeatWrite[]): Promise<void> {
    for (let start = 0; start < beats.length; start += HEARTBEATS_PER_STATEMENT) {
      const batch = beats.slice(start, start + HEARTBEATS_PER_STATEMENT);
      await this.raw(
        `UPDATE workers AS w SET last_heartbeat = v.at, version = v.version
         FROM (VALUES ${batch.map(() => '(?::uuid, ?::timestamptz, ?::text)').join(', ')}) AS v (id, at, version)
         WHERE w.id = v.id AND (w.last_heartbeat IS NULL OR w.last_heartbeat < v.at)`,
        batch.flatMap((beat) => [beat.worker_id, timeIn(beat.at), beat.version]),
      );
    }
  }
}

/** Three bindings a row: well under Postgres's 65,535 bindings per statement. */
const HEARTBEATS_PER_STATEMENT = 5000;
