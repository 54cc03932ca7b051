export {
  type DialectName,
  openSqlStore,
  type SqlStore,
  SqlStoreConfigError,
  type SqlStoreLogger,
  type SqlStoreOptions,
} from './openSqlStore.js';
export { PostgresEventBus, type PostgresEventBusOptions } from './PostgresEventBus.js';
export { MIGRATIONS } from './migrations/migrationSource.js';
export type { TrellisMigration } from './migrations/TrellisMigration.js';
export type { PoolStats } from './PoolWatch.js';
