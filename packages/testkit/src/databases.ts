/**
 * Fresh databases for tests (DESIGN §8): a SQLite file in a temp dir, or a Postgres database of
 * its own, created through the admin URL and dropped afterwards. Postgres suites run when the
 * server is reachable; when it is not, CI (`CI=true`) fails and a laptop skips them, loudly
 * (postgresSuites.ts). This module does not import vitest, so programs other than tests (the
 * benchmarks) can use it through `@trellis/testkit/databases`.
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

/** An empty database: a file in a new temp dir, or a new Postgres database `trellis_test_<random>`. */
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
  const name = `trellis_test_${randomBytes(6).toString('hex')}`;
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
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: testPostgresAdminUrl(), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
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
