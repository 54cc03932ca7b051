import type { Knex } from 'knex';

/** The transaction option, beside knex's own, that carries the statement to send with BEGIN. */
const SETUP = 'trellisSetup';

/** knex's transaction object and its client, which its public types leave out. */
interface KnexTransaction {
  readOnly?: boolean;
  /** The client bound to the transaction's connection, made before `begin` is called. */
  trxClient: { query(connection: unknown, sql: string): Promise<unknown> };
  begin(connection: unknown): Promise<unknown>;
  /** Runs `sql`; with `status` 2, then fails the transaction with `value` (knex's own rollback). */
  query(connection: unknown, sql: string, status?: number, value?: unknown): Promise<unknown>;
}
interface TransactionFactory {
  transaction(container: unknown, config: Record<string, unknown> | undefined, outerTx: unknown): KnexTransaction;
}

/**
 * Makes `knex`'s top-level transactions that carry a setup statement (`withSetup`) send it in the
 * same message as their BEGIN: a multi-statement simple query, one round trip instead of two.
 * knex starts a transaction's BEGIN only once it has a connection, always after the transaction
 * object is made, so replacing `begin` on the new object is in time. The setup SQL must be
 * literal (the simple protocol takes no parameters): callers quote values with `pg.escapeLiteral`.
 */
export function sendSetupWithBegin(knex: Knex): void {
  const client = knex.client as unknown as TransactionFactory;
  const create = client.transaction.bind(client);
  client.transaction = (container, config, outerTx) => {
    const trx = create(container, config, outerTx);
    const setup = config?.[SETUP];
    if (typeof setup === 'string' && !outerTx) {
      trx.begin = async (connection) => {
        try {
          return await trx.trxClient.query(
            connection,
            `${trx.readOnly ? 'BEGIN TRANSACTION READ ONLY' : 'BEGIN'}; ${setup}`,
          );
        } catch (error) {
          // The setup failed inside the block BEGIN opened: roll it back before the connection
          // returns to the pool, and fail the transaction with the setup's error, as knex does.
          return trx.query(connection, 'ROLLBACK', 2, error);
        }
      };
    }
    return trx;
  };
}

/** knex transaction options that send `setup` with BEGIN (see `sendSetupWithBegin`). */
export function withSetup(config: Knex.TransactionConfig, setup: string | null): Knex.TransactionConfig {
  return setup === null ? config : ({ ...config, [SETUP]: setup } as Knex.TransactionConfig);
}
