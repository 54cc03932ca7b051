export {
  type DialectName,
  openSqlStore,
  type SqlStore,
  SqlStoreConfigError,
  type SqlStoreOptions,
} from './openSqlStore.js';
