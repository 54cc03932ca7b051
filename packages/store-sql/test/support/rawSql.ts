import knexFactory, { type Knex } from 'knex';

/**
 * A plain knex connection to a test database, for what a test does behind the stores' back
 * (installing a checking trigger, counting rows). It logs in as the URL says: on Postgres that
 * is the tables' owner, so row-level security does not apply to it.
 */
export function rawConnection(url: string): Knex {
  if (url.startsWith('sqlite://')) {
    return knexFactory({
      client: 'better-sqlite3',
      connection: { filename: url.slice('sqlite://'.length) },
      useNullAsDefault: true,
      pool: {
        min: 1,
        max: 1,
        afterCreate: (conn: { pragma(sql: string): void }, done: (error: Error | null, conn: unknown) => void) => {
          conn.pragma('busy_timeout = 10000');
          done(null, conn);
        },
      },
    });
  }
  return knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 2 } });
}

/** The rows of a SELECT, whatever the driver's result shape. */
export async function selectRows<T>(knex: Knex, sql: string, bindings: readonly Knex.RawBinding[] = []): Promise<T[]> {
  const result: unknown = await knex.raw(sql, bindings);
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}
