import { ConflictError, NotFoundError, UnavailableError } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { classifyPostgresFailure } from '../src/dialects/postgres/postgresErrors.js';
import { classifySqliteFailure } from '../src/dialects/sqlite/sqliteErrors.js';
import { toDomainError } from '../src/errors.js';

/** An error shaped as the driver (through knex) raises it. */
function driverError(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

const translatePg = (error: unknown) => toDomainError(error, classifyPostgresFailure(error));
const translateSqlite = (error: unknown) => toDomainError(error, classifySqliteFailure(error));

describe('vendor errors become domain errors', () => {
  it.each([
    ['users_email_unique', 'email_taken'],
    ['vineyards_owner_name_unique', 'vineyard_name_taken'],
    ['vines_owner_name_unique', 'vine_name_taken'],
    ['vines_owner_project_name_unique', 'project_name_taken'],
    ['worker_releases_version_unique', 'release_exists'],
    ['cli_logins_pkey', 'device_code_used'],
    ['jobs_id_unique', 'already_exists'],
  ])('Postgres unique violation of %s is ConflictError(%s)', (constraint, code) => {
    const translated = translatePg(driverError('insert into … - duplicate key value', { code: '23505', constraint }));
    expect(translated).toBeInstanceOf(ConflictError);
    expect(translated).toMatchObject({ code });
    expect((translated as Error).message).not.toMatch(/duplicate key|23505/);
  });

  it.each([
    ['users.email', 'email_taken'],
    ['vineyards.owner_id, vineyards.name', 'vineyard_name_taken'],
    ['vines.owner_id, vines.name', 'vine_name_taken'],
    ['vines.owner_id, vines.project_name', 'project_name_taken'],
    ['worker_releases.version', 'release_exists'],
    ['cli_logins.device_code', 'device_code_used'],
    ['jobs.id', 'already_exists'],
  ])('SQLite "UNIQUE constraint failed: %s" is ConflictError(%s)', (columns, code) => {
    const error = driverError(`insert into … - UNIQUE constraint failed: ${columns}`, {
      code: columns.endsWith('device_code') ? 'SQLITE_CONSTRAINT_PRIMARYKEY' : 'SQLITE_CONSTRAINT_UNIQUE',
    });
    const translated = translateSqlite(error);
    expect(translated).toBeInstanceOf(ConflictError);
    expect(translated).toMatchObject({ code });
    expect((translated as Error).message).not.toMatch(/SQLITE|constraint/);
  });

  it('a missing referenced record is ConflictError(referenced_record_missing) on both', () => {
    expect(translatePg(driverError('fk', { code: '23503' }))).toMatchObject({ code: 'referenced_record_missing' });
    expect(
      translateSqlite(driverError('FOREIGN KEY constraint failed', { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' })),
    ).toMatchObject({ code: 'referenced_record_missing' });
  });

  it.each([
    ['ECONNREFUSED', { code: 'ECONNREFUSED' }],
    ['a pool timeout', { name: 'KnexTimeoutError' }],
    ["pg's pool timeout", { message: 'timeout exceeded when trying to connect' }],
    ['a missing database', { code: '3D000' }],
    ['a shutdown', { code: '57P01' }],
    ['too many connections', { code: '53300' }],
    ['a connection failure', { code: '08006' }],
    ['a lost connection', { message: 'Connection terminated unexpectedly' }],
  ])('Postgres: %s is UnavailableError(database_unavailable)', (_, fields) => {
    const translated = translatePg(driverError((fields as { message?: string }).message ?? 'failed', fields));
    expect(translated).toBeInstanceOf(UnavailableError);
    expect(translated).toMatchObject({ code: 'database_unavailable' });
  });

  it.each([
    'SQLITE_BUSY',
    'SQLITE_BUSY_SNAPSHOT',
    'SQLITE_LOCKED',
    'SQLITE_CANTOPEN',
    'SQLITE_IOERR_WRITE',
    'SQLITE_FULL',
    'SQLITE_NOTADB',
  ])('SQLite: %s is UnavailableError(database_unavailable)', (code) => {
    const translated = translateSqlite(driverError('failed', { code }));
    expect(translated).toBeInstanceOf(UnavailableError);
    expect(translated).toMatchObject({ code: 'database_unavailable' });
  });

  it('NOT NULL and CHECK violations are bugs: a plain error naming no vendor code', () => {
    for (const translated of [
      translatePg(driverError('null value', { code: '23502' })),
      translateSqlite(driverError('NOT NULL constraint failed: jobs.status', { code: 'SQLITE_CONSTRAINT_NOTNULL' })),
    ]) {
      expect(translated).toBeInstanceOf(Error);
      expect(translated).not.toHaveProperty('code');
      expect((translated as Error).message).toMatch(/this is a bug/);
    }
  });

  it('leaves domain errors and unknown errors (bad SQL) as they are', () => {
    const domain = new NotFoundError('job');
    expect(translatePg(domain)).toBe(domain);
    expect(translateSqlite(domain)).toBe(domain);
    const syntax = driverError('syntax error at or near "SELEC"', { code: '42601' });
    expect(translatePg(syntax)).toBe(syntax);
    const sqliteSyntax = driverError('near "SELEC": syntax error', { code: 'SQLITE_ERROR' });
    expect(translateSqlite(sqliteSyntax)).toBe(sqliteSyntax);
  });
});
