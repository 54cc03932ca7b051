/**
 * Fresh databases for every measurement (testkit's test databases: a SQLite file in a temp dir,
 * or a Postgres database of its own on 127.0.0.1), prepared once per scenario and cloned, so the
 * HTTP run and its baseline start from the same rows.
 */
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  checkTestPostgres,
  createTestDatabase,
  createTestDatabaseTemplate,
  testPostgresAdminUrl,
} from '@trellis/testkit/databases';
import { deferCleanup } from './cleanup.mjs';
import { sleep } from './load.mjs';

export { checkTestPostgres };

/**
 * Prepares a database with `prepare(url)` (which must close its connections) and returns
 * `withClone(work)`, which runs `work(url)` on a fresh copy and drops it afterwards, and `drop()`.
 */
export async function preparedDatabase(dialect, prepare) {
  let prepared;
  let dropHalfMade;
  const template = await createTestDatabaseTemplate(dialect, async (url) => {
    // Until the template exists as an object only its URL names it, should the run be stopped.
    dropHalfMade = deferCleanup(() => dropByUrl(url));
    prepared = await prepare(url);
  });
  dropHalfMade?.cancel();
  return {
    prepared,
    async withClone(work) {
      const database = await cloneWithRetry(template);
      const drop = deferCleanup(() => database.drop());
      try {
        return await work(database.url);
      } finally {
        await drop();
      }
    },
    drop: deferCleanup(() => template.drop()),
  };
}

/** A fresh, empty database for `work(url)`, dropped afterwards. */
export async function withFreshDatabase(dialect, work) {
  const database = await createTestDatabase(dialect);
  const drop = deferCleanup(() => database.drop());
  try {
    return await work(database.url);
  } finally {
    await drop();
  }
}

/** Drops a test database known only by its URL (testkit's layout: a SQLite file in a temp dir). */
async function dropByUrl(url) {
  if (url.startsWith('sqlite://')) {
    await rm(dirname(url.slice('sqlite://'.length)), { recursive: true, force: true });
    return;
  }
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: testPostgresAdminUrl(), connectionTimeoutMillis: 5_000 });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(new URL(url).pathname.slice(1))} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/**
 * Postgres copies a template only when nobody is connected to it, and a backend of a pool that
 * was just closed can take a moment to go away: retry that one error briefly.
 */
async function cloneWithRetry(template) {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await template.clone();
    } catch (error) {
      const busy = /being accessed by other users/.test(String(error?.message));
      if (!busy || attempt >= 20) throw error;
      await sleep(100);
    }
  }
}
