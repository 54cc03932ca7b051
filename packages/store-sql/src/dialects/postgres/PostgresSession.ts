import type { HeartbeatWrite, JobClaimMove, Scope } from '@trellis/core';
import type { Knex } from 'knex';
import type pg from 'pg';
import { type Row, timeIn } from '../../rows.js';
import type { TableName } from '../../schema.js';
import { type ClaimedRows, type SqlSession, sqlName } from '../Dialect.js';
import { insertValues } from '../insertValues.js';
import { assertRowsInScope, restrictToScope } from '../scoping.js';
import { underSavepoint } from './pgTransaction.js';

/**
 * The claim and what its answer reads, in one round trip (m022). Plain SQL sent by pg itself
 * (no query builder on the hottest statement), its values bound as `$n`.
 */
export const CLAIM_STATEMENT = `
  SELECT (c.claimed_job).*,
    c.claimed_vine_before AS claim_vine_before,
    c.claimed_vine_after AS claim_vine_after,
    s.snapshot AS claim_snapshot,
    to_jsonb(ci) AS claim_cloud_identity,
    to_jsonb(vy) AS claim_vineyard
  FROM claim_next_job($1::uuid, $2::timestamptz, $3, $4, $5::jsonb, ARRAY(SELECT jsonb_array_elements_text($6::jsonb))) c
  LEFT JOIN LATERAL (
    SELECT s.snapshot FROM config_snapshots s
    WHERE s.owner_id = (c.claimed_job).owner_id AND s.config_hash = (c.claimed_job).config_hash) s ON true
  LEFT JOIN LATERAL (SELECT * FROM cloud_identities ci WHERE ci.id = (c.claimed_job).cloud_identity_id) ci ON true
  LEFT JOIN LATERAL (SELECT * FROM vineyards vy WHERE vy.id = (c.claimed_job).vineyard_id) vy ON true`;

/** Agents' heartbeats, each only where the stored one is earlier; `rows` rows of three values. */
function heartbeatStatement(rows: number): string {
  const values = Array.from(
    { length: rows },
    (_, row) => `($${3 * row + 1}::uuid, $${3 * row + 2}::timestamptz, $${3 * row + 3}::text)`,
  );
  return `UPDATE workers AS w SET last_heartbeat = v.at, version = v.version
    FROM (VALUES ${values.join(', ')}) AS v (id, at, version)
    WHERE w.id = v.id AND (w.last_heartbeat IS NULL OR w.last_heartbeat < v.at)`;
}

/** Three bindings a row: well under Postgres's 65,535 bindings per statement. */
const HEARTBEATS_PER_STATEMENT = 5000;

/** Savepoint names of one transaction: a counter, so nested ones never collide. */
interface Savepoints {
  count: number;
}

/**
 * A unit of work's view of its transaction, on the pooled connection `client` it holds. The query
 * builder runs on it through knex's public `.connection()`; the hot statements go to pg directly.
 * Queries are narrowed to the scope here too: a second guard behind row-level security.
 */
export class PostgresSession implements SqlSession {
  constructor(
    private readonly knex: Knex,
    private readonly client: pg.ClientBase,
    readonly scope: Scope,
    private readonly savepoints: Savepoints = { count: 0 },
  ) {}

  table(name: TableName): Knex.QueryBuilder {
    return restrictToScope(this.knex(name).connection(this.client), name, this.scope);
  }

  unscoped(name: TableName): Knex.QueryBuilder {
    return this.knex(name).connection(this.client);
  }

  insert(name: TableName, rows: Row | Row[]): Knex.QueryBuilder {
    assertRowsInScope(name, rows, this.scope);
    return this.knex(name).connection(this.client).insert(rows);
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
    const result: { rows: Row[] } = await this.knex.raw(sql, bindings).connection(this.client);
    return result.rows;
  }

  lockSkipLocked(query: Knex.QueryBuilder): Knex.QueryBuilder {
    return query.forUpdate().skipLocked();
  }

  lockForUpdate(query: Knex.QueryBuilder, ...of: string[]): Knex.QueryBuilder {
    return of.length > 0 ? query.forUpdate(...of) : query.forUpdate();
  }

  lockSkippingLocked(query: Knex.QueryBuilder): Knex.QueryBuilder {
    return query.forUpdate().skipLocked();
  }

  /** Under a SAVEPOINT, rolled back to when `statement` throws (as knex's nested transactions were). */
  recoverable<T>(statement: (session: SqlSession) => Promise<T>): Promise<T> {
    this.savepoints.count += 1;
    return underSavepoint(this.client, `trellis_savepoint_${this.savepoints.count}`, () => statement(this));
  }

  whereJsonArrayHas(query: Knex.QueryBuilder, column: string, value: string): Knex.QueryBuilder {
    return query.whereRaw(`"${sqlName(column)}" @> jsonb_build_array(?::text)`, [value]);
  }

  /**
   * One statement: m022's `claim_next_job` takes the job and moves its vine; the joins read what
   * the function does not change (the snapshot, the cloud identity, the vineyard), as JSON for
   * the rows whose columns would clash with the job's. The joins are LATERAL lookups by key: the
   * planner expects a set-returning function to return many rows and would otherwise hash every
   * snapshot, identity and vineyard of the owner to join the one claimed job.
   */
  async claimNextJob(workerId: string, at: string, move: JobClaimMove): Promise<ClaimedRows | undefined> {
    const result = await this.client.query<Row>(CLAIM_STATEMENT, [
      workerId,
      at,
      move.from,
      move.to,
      JSON.stringify(move.vine),
      JSON.stringify(move.vineKeptBy),
    ]);
    const [row] = result.rows;
    if (!row) return undefined;
    const { claim_snapshot, claim_vine_before, claim_vine_after, claim_cloud_identity, claim_vineyard, ...job } = row;
    // The joins read with the statement's own snapshot, taken before the function ran; under READ
    // COMMITTED each query inside the function takes a newer one. A job committed in between is
    // claimed, but what was committed with it (a new configuration's snapshot, an identity, a
    // vineyard) is not joined: read again in a statement of its own, which sees it.
    const late = async (sql: string, key: unknown[]) =>
      (await this.client.query<{ value: unknown }>(sql, key)).rows[0]?.value ?? null;
    const snapshot =
      claim_snapshot ??
      (await late('SELECT snapshot AS value FROM config_snapshots WHERE owner_id = $1 AND config_hash = $2', [
        job.owner_id,
        job.config_hash,
      ]));
    const cloudIdentity =
      claim_cloud_identity ??
      (job.cloud_identity_id
        ? await late('SELECT to_jsonb(ci) AS value FROM cloud_identities ci WHERE ci.id = $1', [job.cloud_identity_id])
        : null);
    const vineyard =
      claim_vineyard ??
      (job.vineyard_id
        ? await late('SELECT to_jsonb(vy) AS value FROM vineyards vy WHERE vy.id = $1', [job.vineyard_id])
        : null);
    return {
      job,
      snapshot: snapshot ?? undefined,
      vine:
        claim_vine_before === null ? null : { before: claim_vine_before as string, after: claim_vine_after as string },
      cloudIdentity: (cloudIdentity as Row | null) ?? null,
      vineyard: (vineyard as Row | null) ?? null,
    };
  }

  async recordHeartbeats(beats: readonly HeartbeatWrite[]): Promise<void> {
    for (let start = 0; start < beats.length; start += HEARTBEATS_PER_STATEMENT) {
      const batch = beats.slice(start, start + HEARTBEATS_PER_STATEMENT);
      await this.client.query(
        heartbeatStatement(batch.length),
        batch.flatMap((beat) => [beat.worker_id, timeIn(beat.at), beat.version]),
      );
    }
  }
}
