export {
  type DialectName,
  openSqlStore,
  type SqlStore,
  SqlStoreConfigError,
  type SqlStoreLogger,
  type SqlStoreOptions,
} from './openSqlStore.js';
export { PostgresEventBus, type PostgresEventBusOptions } from './PostgresEventBus.js';
export type { PoolStats } from './PoolWatch.js';
