/**
 * Fresh databases for tests (DESIGN §8): a SQLite file in a temp dir, or a Postgres database of
 * its own, created through the admin URL and dropped afterwards. Postgres suites run when the
 * server is reachable; when it is not, CI (`CI=true`) fails and a laptop skips them, loudly
 * (postgresSuites.ts). This module does not import vitest, so programs other than tests (the
 * benchmarks) can use it through `@trellis/testkit/databases`.
 *
 * On a Postgres shared with other programs (docs/operations.md, "Running the tests on a shared
 * Postgres"): each database is named after the test run that made it
 * (`trellis_test_<run>_<random>`, the run being its start time and pid), so the run's global
 * teardown drops what it made and a later run drops what a crashed one left behind; and tests
 * open small pools (`testPostgresPoolSize()`).
 */
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type TestDialect = 'sqlite' | 'postgres';

export interface TestDatabase {
  readonly dialect: TestDialect;
  /** What `DATABASE_URL` would hold. */
  readonly url: string;
  /** Removes the database and everything in it. */
  drop(): Promise<void>;
}

/** A database prepared once (say, migrated) that tests clone instead of preparing again. */
export interface TestDatabaseTemplate {
  readonly dialect: TestDialect;
  clone(): Promise<TestDatabase>;
  drop(): Promise<void>;
}

export const DEFAULT_TEST_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** A connection to an existing database (`postgres` by default) that may create and drop others. */
export function testPostgresAdminUrl(): string {
  return process.env.TRELLIS_TEST_POSTGRES_URL || DEFAULT_TEST_POSTGRES_URL;
}

/** Prefix of every test database on Postgres. */
export const TEST_DATABASE_PREFIX = 'trellis_test_';

/**
 * Most connections a test's store or control plane opens on Postgres (`TRELLIS_TEST_DB_POOL_MAX`,
 * default 3): tests prove behaviour, not throughput, and the server is shared.
 */
export function testPostgresPoolSize(): number {
  const raw = process.env.TRELLIS_TEST_DB_POOL_MAX;
  const value = raw ? Number(raw) : 3;
  if (!Number.isInteger(value) || value < 2) {
    throw new Error(`TRELLIS_TEST_DB_POOL_MAX must be an integer of at least 2 (got "${raw}")`);
  }
  return value;
}

let processRunId: string | undefined;

/**
 * The test run this process belongs to: set by the global setup (`TRELLIS_TEST_RUN_ID`, shared by
 * its worker processes), else this process's own. `<start time in seconds, base 36>_<pid, base 36>`.
 */
export function testRunId(): string {
  const fromEnv = process.env.TRELLIS_TEST_RUN_ID;
  if (fromEnv && /^[0-9a-z]+_[0-9a-z]+$/.test(fromEnv)) return fromEnv;
  processRunId ??= newTestRunId();
  return processRunId;
}

export function newTestRunId(now = Date.now(), pid = process.pid): string {
  return `${Math.floor(now / 1000).toString(36)}_${pid.toString(36)}`;
}

/** When the run named in a test database's name started; null for a name of another form. */
export function testDatabaseStartedAt(name: string): Date | null {
  const match = /^trellis_test_([0-9a-z]+)_[0-9a-z]+_[0-9a-f]+$/.exec(name);
  if (!match?.[1]) return null;
  return new Date(Number.parseInt(match[1], 36) * 1000);
}

/**
 * Drops the Postgres test databases of run `runId`, and those of any run that started more than
 * `staleAfterMs` ago (a crashed run's leftovers). Returns the names dropped.
 */
export async function dropTestDatabases(
  options: { runId?: string; staleAfterMs?: number; now?: number } = {},
): Promise<string[]> {
  const now = options.now ?? Date.now();
  const names = await adminRows<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE '${TEST_DATABASE_PREFIX.replaceAll('_', '\\_')}%'`,
  );
  const doomed = names
    .map((row) => row.datname)
    .filter((name) => {
      if (options.runId && name.startsWith(`${TEST_DATABASE_PREFIX}${options.runId}_`)) return true;
      const startedAt = testDatabaseStartedAt(name);
      return (
        options.staleAfterMs !== undefined && startedAt !== null && now - startedAt.getTime() > options.staleAfterMs
      );
    });
  for (const name of doomed) await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  return doomed;
}

/** An empty database: a file in a new temp dir, or a new Postgres database `trellis_test_<run>_<random>`. */
export async function createTestDatabase(dialect: TestDialect): Promise<TestDatabase> {
  return dialect === 'sqlite' ? createSqliteDatabase() : createPostgresDatabase();
}

/**
 * Runs `prepare` on a new database once; each `clone()` then copies it (SQLite: the file;
 * Postgres: `CREATE DATABASE … TEMPLATE`, much faster than migrating again). `prepare` must have
 * closed its connections when it returns: Postgres copies only a template nobody is connected to.
 */
export async function createTestDatabaseTemplate(
  dialect: TestDialect,
  prepare: (url: string) => Promise<void>,
): Promise<TestDatabaseTemplate> {
  const template = await createTestDatabase(dialect);
  try {
    await prepare(template.url);
  } catch (error) {
    await template.drop();
    throw error;
  }
  if (dialect === 'sqlite') {
    const source = sqliteFileOf(template.url);
    return {
      dialect,
      async clone() {
        const copy = await createSqliteDatabase();
        await copyFile(source, sqliteFileOf(copy.url));
        return copy;
      },
      drop: () => template.drop(),
    };
  }
  const templateName = new URL(template.url).pathname.slice(1);
  return {
    dialect,
    clone: () => createPostgresDatabase(templateName),
    drop: () => template.drop(),
  };
}

async function createSqliteDatabase(): Promise<TestDatabase> {
  const dir = await mkdtemp(join(tmpdir(), 'trellis-test-'));
  return {
    dialect: 'sqlite',
    url: `sqlite://${join(dir, 'trellis.db')}`,
    drop: () => rm(dir, { recursive: true, force: true }),
  };
}

function sqliteFileOf(url: string): string {
  return url.slice('sqlite://'.length);
}

async function createPostgresDatabase(template?: string): Promise<TestDatabase> {
  const name = `${TEST_DATABASE_PREFIX}${testRunId()}_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const url = new URL(testPostgresAdminUrl());
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    dialect: 'postgres',
    url: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** One statement on a short-lived admin connection; `pg` is loaded only when Postgres is used. */
async function adminQuery(sql: string): Promise<void> {
  await adminRows(sql);
}

/**
 * At most this many admin connections of one process at once: a suite dropping its hundred
 * databases together must not open a hundred connections (it once did, reaching max_connections).
 */
const ADMIN_CONNECTIONS = 3;
let adminBusy = 0;
const adminWaiting: (() => void)[] = [];

async function adminRows<T>(sql: string): Promise<T[]> {
  if (adminBusy >= ADMIN_CONNECTIONS) await new Promise<void>((resolve) => adminWaiting.push(resolve));
  else adminBusy++;
  try {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: testPostgresAdminUrl(), connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  } finally {
    // Hands the turn straight to the next waiter (adminBusy unchanged), or frees it.
    const next = adminWaiting.shift();
    if (next) next();
    else adminBusy--;
  }
}

export type PostgresAvailability =
  | { available: true; adminUrl: string }
  | { available: false; adminUrl: string; reason: string };

let availability: Promise<PostgresAvailability> | undefined;

/** Whether the test Postgres answers; asked once per process. */
export function checkTestPostgres(): Promise<PostgresAvailability> {
  availability ??= (async () => {
    const adminUrl = testPostgresAdminUrl();
    try {
      await adminQuery('SELECT 1');
      return { available: true, adminUrl };
    } catch (error) {
      return { available: false, adminUrl, reason: error instanceof Error ? error.message : String(error) };
    }
  })();
  return availability;
}

export function isCi(): boolean {
  return process.env.CI === 'true' || process.env.CI === '1';
}
