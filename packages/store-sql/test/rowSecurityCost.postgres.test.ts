/**
 * Row-level security costs once per statement, not once per row (m024, issue 17): a policy's
 * `trellis_visible_owners()` runs once however many rows the policy's filter sees. Counted with
 * Postgres's own function statistics (`track_functions`), so the check is exact, not timed.
 */
import { randomUUID } from 'node:crypto';
import { checkTestPostgres, describeWithPostgres } from '@trellis/testkit';
import type { Knex } from 'knex';
import { afterEach, expect, it } from 'vitest';
import { ACTOR_SETTING, APP_ROLE, OWNER_SETTING } from '../src/schema.js';
import { rawConnection, selectRows } from './support/rawSql.js';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();
const ROWS = 200;

describeWithPostgres('row-level security on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');
  let raw: Knex | undefined;
  afterEach(async () => {
    await raw?.destroy();
    raw = undefined;
  });

  it('every owner policy computes the visible owners once per statement', async () => {
    const { url, close } = await databases.openStore();
    try {
      raw = rawConnection(url);
      const policies = await selectRows<{ tablename: string; qual: string; with_check: string }>(
        raw,
        `SELECT tablename, qual, with_check FROM pg_policies
         WHERE schemaname = current_schema() AND qual LIKE '%trellis_visible_owners%'`,
      );
      expect(policies.length).toBeGreaterThan(20);
      for (const policy of policies) {
        expect(policy.qual, policy.tablename).toMatch(/ANY \(\(\s*SELECT [\w".]*trellis_visible_owners\(\)/);
        expect(policy.with_check, policy.tablename).toBe(policy.qual);
      }
    } finally {
      await close();
    }
  });

  it(`reads ${ROWS} rows through a policy's filter with one call of trellis_visible_owners()`, async () => {
    const { url, close } = await databases.openStore();
    try {
      raw = rawConnection(url);
      const owner = randomUUID();
      await raw('users').insert({
        id: owner,
        email: 'rls-cost@example.com',
        name: 'RLS cost',
        created_at: new Date().toISOString(),
      });
      await raw('vineyards').insert(
        Array.from({ length: ROWS }, (_, index) => ({
          id: randomUUID(),
          owner_id: owner,
          name: `vineyard-${index}`,
          created_at: new Date().toISOString(),
        })),
      );
      const calls = await raw.transaction(async (trx) => {
        // The policy as a filter on every row (no index to evaluate it once as a condition).
        await trx.raw('SET LOCAL enable_indexscan = off');
        await trx.raw('SET LOCAL enable_bitmapscan = off');
        await trx.raw("SET LOCAL track_functions = 'all'");
        // The owner at work on its own records, as an owner scope sets it.
        await trx.raw(`SELECT set_config('${OWNER_SETTING}', ?, true), set_config('${ACTOR_SETTING}', ?, true)`, [
          owner,
          owner,
        ]);
        await trx.raw(`SET LOCAL ROLE ${APP_ROLE}`);
        const [seen] = await selectRows<{ count: string }>(trx, 'SELECT count(*) AS count FROM vineyards');
        expect(Number(seen?.count)).toBe(ROWS);
        await trx.raw('RESET ROLE');
        const [stats] = await selectRows<{ calls: string }>(
          trx,
          `SELECT coalesce(sum(calls), 0) AS calls FROM pg_stat_xact_user_functions
           WHERE funcname = 'trellis_visible_owners'`,
        );
        return Number(stats?.calls);
      });
      expect(calls).toBe(1);
    } finally {
      await close();
    }
  });
});
