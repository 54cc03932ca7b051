/**
 * The claim's order is stated once (`dialects/claimOrder.ts`, issue 29): SQLite's claim and the
 * queue's positions read `CLAIM_ORDER`, and Postgres's `claim_next_job`, defined by a migration,
 * must be the function of that same order. The conformance suite proves the behaviour; this names
 * the drift at once if a migration redefines the function with another order and the constant is
 * left behind.
 */
import { checkTestPostgres, describeWithPostgres } from '@trellis/testkit';
import pg from 'pg';
import { expect, it } from 'vitest';
import { CLAIM_ORDER } from '../src/dialects/claimOrder.js';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

describeWithPostgres('the claim order on Postgres', postgres, () => {
  const databases = useMigratedDatabases('postgres');

  it("claim_next_job orders its candidates by CLAIM_ORDER, the queue's order", async () => {
    const { url, close } = await databases.openStore();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ source: string }>(
        `SELECT prosrc AS source FROM pg_proc WHERE proname = 'claim_next_job' AND pronargs = 6`,
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]?.source).toContain(`ORDER BY ${CLAIM_ORDER}\n`);
    } finally {
      await client.end();
      await close();
    }
  });
});
