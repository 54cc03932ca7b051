/**
 * Rows of the job lifecycle table (issue 24) through the real use cases on the SQL unit of work:
 * what an end leaves in the outboxes, the audit log and the live announcements is the same on
 * SQLite and Postgres as on the in-memory fakes core's tests use.
 */
import {
  checkTestPostgres,
  createTestCoreOn,
  describeJobLifecycleConformance,
  describeWithPostgres,
  type LifecycleRow,
  type TestDialect,
} from '@trellis/testkit';
import { describe } from 'vitest';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

/** The rows of the ends issue 24 fixed, and the common ones. */
const onSql = (row: LifecycleRow) =>
  /^(reported: a push's PLAN succeeded|reported: a DESTROY_WORKER|start_failed: the identity|agent_lost|superseded)/.test(
    row.name,
  );

function describeOn(dialect: TestDialect, name: string): void {
  const databases = useMigratedDatabases(dialect);
  describeJobLifecycleConformance(
    name,
    async (options) => {
      const { store, close } = await databases.openStore();
      return { core: createTestCoreOn(store.uow, options), close };
    },
    onSql,
  );
}

describe('the job lifecycle on SQLite', () => {
  describeOn('sqlite', 'SQLite');
});

describeWithPostgres('the job lifecycle on Postgres', postgres, () => {
  describeOn('postgres', 'Postgres');
});
