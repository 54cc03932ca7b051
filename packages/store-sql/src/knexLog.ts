import type { Knex } from 'knex';
import type { SqlStoreLogger } from './openSqlStore.js';

/** knex's log hooks, sent to the store's logger (knex's debug output is dropped). */
export function knexLog(logger: SqlStoreLogger): Knex.Logger {
  return {
    warn: (message) => logger.warn(String(message)),
    deprecate: (method, alternative) => logger.warn(`knex: ${method} is deprecated, use ${alternative}`),
    error: (message) => logger.error(String(message)),
    debug: () => {},
  };
}
