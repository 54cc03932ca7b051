import type pg from 'pg';

/** How a transaction starts: read-only or not, and a statement to run right after BEGIN. */
export interface TransactionStart {
  readOnly: boolean;
  /**
   * Literal SQL run in the transaction before anything else, in the message of its BEGIN (the
   * simple protocol takes no parameters: quote values with `pg.escapeLiteral`), or null.
   */
  setup: string | null;
}

/**
 * The message that opens a transaction: BEGIN and the setup as one simple-protocol query, which
 * Postgres runs statement by statement in one round trip.
 */
export function beginStatement(start: TransactionStart): string {
  const begin = start.readOnly ? 'BEGIN TRANSACTION READ ONLY;' : 'BEGIN;';
  return start.setup === null ? begin : `${begin} ${start.setup}`;
}

/**
 * Runs `work` in one transaction on a connection of `connect` (a `pg.Pool`'s, through pg's public
 * API), and gives the connection back: BEGIN with the setup in one message, COMMIT when `work`
 * resolves, ROLLBACK when the setup or `work` fails. A connection whose ROLLBACK failed, or that
 * failed without an answer from the server (no SQLSTATE: the connection itself broke), is
 * destroyed rather than pooled, so the next unit of work never inherits a half-open transaction.
 */
export async function runTransaction<T>(
  connect: () => Promise<pg.PoolClient>,
  start: TransactionStart,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await connect();
  let usable = true;
  const rollBack = async (): Promise<void> => {
    try {
      await client.query('ROLLBACK');
    } catch {
      // The transaction's own error is the one to report; the connection is not trusted again.
      usable = false;
    }
  };
  try {
    try {
      await client.query(beginStatement(start));
    } catch (error) {
      // A failed setup leaves the block BEGIN opened (ROLLBACK outside a block only warns).
      if (connectionBroke(error)) usable = false;
      else await rollBack();
      throw error;
    }
    let result: T;
    try {
      result = await work(client);
    } catch (error) {
      await rollBack();
      throw error;
    }
    try {
      // COMMIT; as knex sent it. A COMMIT that fails with a SQLSTATE has ended the transaction.
      await client.query('COMMIT;');
    } catch (error) {
      if (connectionBroke(error)) usable = false;
      throw error;
    }
    return result;
  } finally {
    client.release(!usable);
  }
}

/**
 * Runs `statement` under a savepoint of the transaction on `client`: released when it resolves,
 * rolled back to when it throws, so a failed statement leaves the transaction usable (Postgres
 * aborts a whole transaction on any error otherwise). Names come from a counter per transaction.
 */
export async function underSavepoint<T>(client: pg.ClientBase, name: string, statement: () => Promise<T>): Promise<T> {
  await client.query(`SAVEPOINT ${name}`);
  let result: T;
  try {
    result = await statement();
  } catch (error) {
    try {
      await client.query(`ROLLBACK TO SAVEPOINT ${name}`);
    } catch {
      // The transaction is lost anyway; its end reports the connection. Keep the first error.
    }
    throw error;
  }
  await client.query(`RELEASE SAVEPOINT ${name}`);
  return result;
}

/**
 * The connection itself failed: an error that did not come from the server (no SQLSTATE), or
 * the server's own goodbye as the answer to a statement (class 08, connection exception; 57P01–03,
 * the backend terminated, crashed or not yet accepting). Which of the two a statement gets when a
 * backend is terminated depends on whether pg read the goodbye before sending it.
 */
export function connectionBroke(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return code.startsWith('08') || /^57P0[123]$/.test(code);
}
