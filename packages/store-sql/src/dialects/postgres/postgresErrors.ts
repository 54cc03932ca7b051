import { classifyCommonFailure, type StoreFailure, uniqueKeyByConstraint } from '../../errors.js';

/**
 * SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html) that mean the
 * database cannot serve us right now, by class (first two characters) or exactly.
 */
const UNAVAILABLE_CLASSES = ['08', '53', '58'];
const UNAVAILABLE_STATES: Readonly<Record<string, string>> = {
  '3D000': 'the database does not exist',
  '28000': 'the database refused the credentials',
  '28P01': 'the database refused the credentials',
  '57P01': 'the database is shutting down',
  '57P02': 'the database is shutting down',
  '57P03': 'the database is not accepting connections yet',
  '57014': 'the database cancelled the statement (timeout)',
  '55P03': 'a lock was not granted in time',
  '40001': 'the transaction conflicted with another one; try again',
  '40P01': 'the transaction deadlocked with another one; try again',
  '25006': 'the database is read-only (a standby?)',
};

/** Errors the pg driver raises without a SQLSTATE when the connection itself fails. */
const CONNECTION_LOST =
  /connection terminated|connection timeout|connection error|terminating connection|Connection ended/i;

/** pg's pool when no connection became free (or could be opened) within `connectionTimeoutMillis`. */
const POOL_TIMEOUT = /timeout exceeded when trying to connect/i;

export function classifyPostgresFailure(error: unknown): StoreFailure | null {
  const common = classifyCommonFailure(error);
  if (common) return common;
  if (!(error instanceof Error)) return null;
  const state = (error as { code?: unknown }).code;
  if (typeof state !== 'string' || !/^[0-9A-Z]{5}$/.test(state)) {
    if (POOL_TIMEOUT.test(error.message)) {
      return { kind: 'unavailable', reason: 'no database connection became free in time' };
    }
    return CONNECTION_LOST.test(error.message)
      ? { kind: 'unavailable', reason: 'the connection to the database was lost' }
      : null;
  }
  switch (state) {
    case '23505':
      return { kind: 'unique', key: uniqueKeyByConstraint((error as { constraint?: unknown }).constraint) };
    case '23503':
      return { kind: 'foreign_key' };
    case '23502':
      return { kind: 'integrity', constraint: 'not null' };
    case '23514':
      return { kind: 'integrity', constraint: 'check' };
    case '42501':
      // Also what a row-level security WITH CHECK refusal reports: an owner-scoped unit of work
      // wrote another owner's row, which only a bug in the caller does.
      return { kind: 'integrity', constraint: 'privilege or row-level security' };
  }
  const reason = UNAVAILABLE_STATES[state];
  if (reason !== undefined) return { kind: 'unavailable', reason };
  if (UNAVAILABLE_CLASSES.includes(state.slice(0, 2))) {
    return { kind: 'unavailable', reason: 'the database cannot serve requests right now' };
  }
  return null;
}
