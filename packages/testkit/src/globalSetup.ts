/**
 * Vitest global setup (vitest.config.ts): names the run (or keeps the name `TRELLIS_TEST_RUN_ID`
 * gives it), so that every Postgres test database
 * it makes, in any worker process, carries the run's id (`TRELLIS_TEST_RUN_ID`); drops the
 * databases left by runs that started more than `TRELLIS_TEST_STALE_DB_HOURS` (default 6) ago,
 * which crashed or were killed; and at the end drops every database of this run that a test
 * did not drop itself. Without a reachable Postgres it does nothing.
 */
import { checkTestPostgres, dropTestDatabases, newTestRunId } from './databases.js';

export async function setup(): Promise<() => Promise<void>> {
  // A run id given by the caller (.ci/run sets one to check its own databases afterwards) is kept.
  const given = process.env.TRELLIS_TEST_RUN_ID;
  const runId = given && /^[0-9a-z]+_[0-9a-z]+$/.test(given) ? given : newTestRunId();
  process.env.TRELLIS_TEST_RUN_ID = runId;
  if (!(await checkTestPostgres()).available) return async () => {};
  const hours = Number(process.env.TRELLIS_TEST_STALE_DB_HOURS || 6);
  const stale = await dropTestDatabases({ staleAfterMs: hours * 3_600_000 });
  if (stale.length > 0) {
    process.stderr.write(`dropped ${stale.length} test database(s) left by runs over ${hours} h old\n`);
  }
  return async () => {
    const left = await dropTestDatabases({ runId });
    if (left.length > 0) process.stderr.write(`dropped ${left.length} test database(s) the tests left behind\n`);
  };
}
