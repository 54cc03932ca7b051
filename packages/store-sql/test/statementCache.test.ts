import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { cacheStatements } from '../src/dialects/sqlite/statementCache.js';

describe('SQLite statement cache', () => {
  let db: Database.Database | undefined;
  afterEach(() => db?.close());

  it('prepares a statement once per SQL text and still answers with each call’s bindings', () => {
    db = new Database(':memory:');
    db.exec('CREATE TABLE jobs (id INTEGER PRIMARY KEY, status TEXT)');
    cacheStatements(db);
    const insert = db.prepare('INSERT INTO jobs (status) VALUES (?)');
    expect(db.prepare('INSERT INTO jobs (status) VALUES (?)')).toBe(insert);
    insert.run('QUEUED');
    db.prepare('INSERT INTO jobs (status) VALUES (?)').run('CANCELLED');
    const byStatus = 'SELECT id FROM jobs WHERE status = ? ORDER BY id';
    expect(db.prepare(byStatus).all('QUEUED')).toEqual([{ id: 1 }]);
    expect(db.prepare(byStatus).all('CANCELLED')).toEqual([{ id: 2 }]);
  });

  it('keeps at most its size, dropping the least recently used', () => {
    db = new Database(':memory:');
    cacheStatements(db, 2);
    const one = db.prepare('SELECT 1 AS n');
    const two = db.prepare('SELECT 2 AS n');
    expect(db.prepare('SELECT 1 AS n')).toBe(one); // used again: now the most recent
    db.prepare('SELECT 3 AS n'); // evicts SELECT 2
    expect(db.prepare('SELECT 1 AS n')).toBe(one);
    expect(db.prepare('SELECT 2 AS n')).not.toBe(two);
  });

  it('answers from the current schema after a migration changed it', () => {
    db = new Database(':memory:');
    db.exec('CREATE TABLE workers (id INTEGER PRIMARY KEY)');
    cacheStatements(db);
    db.prepare('INSERT INTO workers (id) VALUES (?)').run(1);
    const select = 'SELECT * FROM workers';
    expect(db.prepare(select).all()).toEqual([{ id: 1 }]);
    db.exec('ALTER TABLE workers ADD COLUMN version TEXT');
    db.prepare('UPDATE workers SET version = ?').run('1.2.3');
    expect(db.prepare(select).all()).toEqual([{ id: 1, version: '1.2.3' }]);
  });
});
