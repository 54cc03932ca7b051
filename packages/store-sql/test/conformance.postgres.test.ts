import { checkTestPostgres, describeStoreConformance, describeWithPostgres } from '@trellis/testkit';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

describeWithPostgres('store-sql on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');
  describeStoreConformance('Postgres', () => databases.openStore());
});
