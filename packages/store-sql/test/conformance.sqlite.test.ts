import { describeStoreConformance } from '@trellis/testkit';
import { describe } from 'vitest';
import { useMigratedDatabases } from './support/sqlStores.js';

describe('store-sql on SQLite', () => {
  const databases = useMigratedDatabases('sqlite');
  describeStoreConformance('SQLite', () => databases.openStore());
});
