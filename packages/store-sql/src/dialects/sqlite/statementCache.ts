/** The part of a better-sqlite3 `Database` the cache wraps. */
interface Preparing {
  prepare(sql: string): unknown;
}

/** Distinct statements kept per connection; the least recently used goes first. */
export const STATEMENT_CACHE_SIZE = 500;

/**
 * Makes `connection.prepare` answer a statement it prepared before for the same SQL text. knex's
 * better-sqlite3 client prepares every query anew, and on a steady request (a heartbeat, a claim)
 * compiling the SQL cost more than running it. Sharing a statement is safe here: the process has
 * one connection, used by one unit of work at a time, and knex runs each statement to completion
 * (`all`/`run`) before the next; SQLite recompiles a statement itself after a schema change.
 */
export function cacheStatements(connection: Preparing, size = STATEMENT_CACHE_SIZE): void {
  const prepare = connection.prepare.bind(connection);
  const statements = new Map<string, unknown>();
  connection.prepare = (sql: string) => {
    const cached = statements.get(sql);
    if (cached !== undefined) {
      // Least recently used first: a hit moves to the end.
      statements.delete(sql);
      statements.set(sql, cached);
      return cached;
    }
    const statement = prepare(sql);
    if (statements.size >= size) statements.delete(statements.keys().next().value as string);
    statements.set(sql, statement);
    return statement;
  };
}
