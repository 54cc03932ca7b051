import type { TestDatabase } from '@trellis/testkit';
import Database from 'better-sqlite3';
import pg from 'pg';

export interface StoredIdentityToken {
  user_id: string;
  provider: string;
  provider_token: string | null;
}

/** The `identities` rows as the database holds them, read past the stores. */
export async function storedIdentityTokens(database: TestDatabase): Promise<StoredIdentityToken[]> {
  const sql = 'SELECT user_id, provider, provider_token FROM identities ORDER BY provider';
  if (database.dialect === 'sqlite') {
    const db = new Database(database.url.slice('sqlite://'.length), { readonly: true });
    try {
      return db.prepare(sql).all() as StoredIdentityToken[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query(sql)).rows.map((row) => ({ ...row, user_id: String(row.user_id) }));
  } finally {
    await client.end();
  }
}

/** Every row of a query, read past the stores (as the connecting role: no row-level security). */
export async function rawRows(database: TestDatabase, sql: string): Promise<Record<string, unknown>[]> {
  if (database.dialect === 'sqlite') {
    const db = new Database(database.url.slice('sqlite://'.length), { readonly: true });
    try {
      return db.prepare(sql).all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Runs one statement past the stores (as the connecting role): a test sets up what no API makes yet. */
export async function rawExecute(database: TestDatabase, sql: string, params: unknown[] = []): Promise<void> {
  if (database.dialect === 'sqlite') {
    const db = new Database(database.url.slice('sqlite://'.length));
    try {
      db.prepare(sql).run(...params);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}
