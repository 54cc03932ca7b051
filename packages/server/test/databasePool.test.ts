/**
 * `TRELLIS_DB_POOL_MAX` bounds the connections a control plane opens to Postgres: its store's
 * pool, plus the one connection of the event bus, however many requests arrive at once.
 */
import { ConfigError, loadConfig } from '@trellis/server';
import { testPostgresAdminUrl } from '@trellis/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describePostgres } from './support/dialects.js';

const BASE = { TRELLIS_DATA_DIR: '/tmp/trellis-config-test', CLI_JWT_SECRET: 'x'.repeat(40) };

describe('TRELLIS_DB_POOL_MAX', () => {
  it('defaults to 10 and takes an integer from 2', () => {
    expect(loadConfig(BASE).databasePoolMax).toBe(10);
    expect(loadConfig({ ...BASE, TRELLIS_DB_POOL_MAX: '3' }).databasePoolMax).toBe(3);
    for (const bad of ['1', '0', 'ten', '2.5']) {
      expect(() => loadConfig({ ...BASE, TRELLIS_DB_POOL_MAX: bad }), bad).toThrow(ConfigError);
    }
    expect(() => loadConfig({ ...BASE, TRELLIS_DB_POOL_MAX: '1' })).toThrow(
      /TRELLIS_DB_POOL_MAX must be an integer from 2/,
    );
  });
});

/** Connections to the control plane's database, from anyone (this test's own are on `postgres`). */
async function connectionsTo(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: testPostgresAdminUrl() });
  await client.connect();
  try {
    const result = await client.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [
      new URL(databaseUrl).pathname.slice(1),
    ]);
    return result.rows[0].n as number;
  } finally {
    await client.end();
  }
}

describePostgres('a control plane with TRELLIS_DB_POOL_MAX=2 on Postgres', () => {
  let running: RunningControlPlane;
  beforeAll(async () => {
    running = await startControlPlane('postgres', { env: { TRELLIS_DB_POOL_MAX: '2' } });
  });
  afterAll(async () => {
    await running?.close();
  });

  it('serves 40 requests at once over at most 2 pooled connections and the event bus', async () => {
    const client = await running.userClient();
    const vineyard = await client.createVineyard('pool');
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0 ? client.listVineyards() : client.getVineyard(vineyard.id).then((v) => [v]),
      ),
    );
    expect(answers.every((list) => list.some((v) => v.id === vineyard.id))).toBe(true);
    // Idle pooled connections stay open for a while, so this counts what the burst opened.
    expect(await connectionsTo(running.database.url)).toBeLessThanOrEqual(3);
  });
});
