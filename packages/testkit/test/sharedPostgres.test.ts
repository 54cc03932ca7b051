/**
 * What keeps the test suite fit for a Postgres shared with other programs: the machine-wide
 * budget of Postgres suites, and test databases named after their run so that the run drops its
 * own at the end and a later run drops a crashed run's.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  checkTestPostgres,
  createTestDatabase,
  dropTestDatabases,
  newTestRunId,
  type TestDatabase,
  testDatabaseStartedAt,
  testPostgresAdminUrl,
} from '../src/databases.js';
import { describeWithPostgres } from '../src/postgresSuites.js';
import { takeSlot } from '../src/postgresSlots.js';

const postgres = await checkTestPostgres();

describe('Postgres suite slots', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const slotDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-slots-'));
    dirs.push(dir);
    return dir;
  };

  it('gives out no more slots than the budget until one is given back', async () => {
    const dir = slotDir();
    const first = await takeSlot(2, dir);
    const second = await takeSlot(2, dir);
    let thirdTaken = false;
    const third = takeSlot(2, dir).then((release) => {
      thirdTaken = true;
      return release;
    });
    // Several polling rounds of the waiter go by without a slot.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(thirdTaken).toBe(false);
    await second();
    const releaseThird = await third;
    expect(thirdTaken).toBe(true);
    await first();
    await releaseThird();
  });

  it('takes over the slot of a process that died holding it', async () => {
    const dir = slotDir();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    writeFileSync(join(dir, 'slot-0'), `${dead.stdout}\n`);
    const release = await takeSlot(1, dir);
    await release();
  });
});

describe('test database names', () => {
  it('carry the start time of their run', () => {
    const startedAt = Date.UTC(2026, 0, 2, 3, 4, 5);
    const runId = newTestRunId(startedAt, 4242);
    expect(testDatabaseStartedAt(`trellis_test_${runId}_0a1b2c3d4e5f`)?.getTime()).toBe(startedAt);
    expect(testDatabaseStartedAt('trellis_test_0a1b2c3d4e5f')).toBeNull();
    expect(testDatabaseStartedAt('trellis_production')).toBeNull();
  });
});

describeWithPostgres('dropping test databases', postgres, () => {
  const made: TestDatabase[] = [];
  const savedRunId = process.env.TRELLIS_TEST_RUN_ID;
  afterEach(async () => {
    if (savedRunId === undefined) delete process.env.TRELLIS_TEST_RUN_ID;
    else process.env.TRELLIS_TEST_RUN_ID = savedRunId;
    await Promise.all(made.splice(0).map((database) => database.drop()));
  });

  async function databaseOfRun(runId: string): Promise<TestDatabase> {
    process.env.TRELLIS_TEST_RUN_ID = runId;
    const database = await createTestDatabase('postgres');
    made.push(database);
    return database;
  }

  async function exists(database: TestDatabase): Promise<boolean> {
    const name = new URL(database.url).pathname.slice(1);
    const client = new pg.Client({ connectionString: testPostgresAdminUrl() });
    await client.connect();
    try {
      return (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    } finally {
      await client.end();
    }
  }

  it("drops a finished run's databases, and those of runs started too long ago, and no others", async () => {
    const now = Date.now();
    const crashed = newTestRunId(now - 7 * 3_600_000, 101);
    const recent = newTestRunId(now - 3_600_000, 102);
    const finished = newTestRunId(now, 103);
    const ofCrashed = await databaseOfRun(crashed);
    const ofRecent = await databaseOfRun(recent);
    const ofFinished = await databaseOfRun(finished);
    expect(new URL(ofFinished.url).pathname).toMatch(new RegExp(`^/trellis_test_${finished}_[0-9a-f]{12}$`));

    const stale = await dropTestDatabases({ staleAfterMs: 6 * 3_600_000, now });
    expect(stale).toContain(new URL(ofCrashed.url).pathname.slice(1));
    expect(await exists(ofCrashed)).toBe(false);
    expect(await exists(ofRecent)).toBe(true);
    expect(await exists(ofFinished)).toBe(true);

    expect(await dropTestDatabases({ runId: finished })).toEqual([new URL(ofFinished.url).pathname.slice(1)]);
    expect(await exists(ofFinished)).toBe(false);
    expect(await exists(ofRecent)).toBe(true);
  });
});
