import { ConflictError, isDomainError, UnavailableError } from '@trellis/core';
import { UNIQUE_KEYS, type UniqueKey } from './schema.js';

/**
 * What went wrong in the database, in our words. Each dialect classifies its own driver's errors
 * into one of these; `toDomainError` then decides what callers see, the same way for both.
 */
export type StoreFailure =
  /** A unique key refused a duplicate; `key` is undefined for keys callers have no code for. */
  | { kind: 'unique'; key: UniqueKey | undefined }
  /** A reference to a record that does not exist (or no longer exists). */
  | { kind: 'foreign_key' }
  /** A NOT NULL or CHECK constraint refused a row: the caller built a bad record, a bug. */
  | { kind: 'integrity'; constraint: string }
  /** The database cannot be reached, refused us or is too busy to answer. */
  | { kind: 'unavailable'; reason: string };

/** Errors of the network and of knex's pool, which both dialects can meet. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

export function classifyCommonFailure(error: unknown): StoreFailure | null {
  if (!(error instanceof Error)) return null;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) {
    return { kind: 'unavailable', reason: `the database cannot be reached (${code})` };
  }
  if (error.name === 'KnexTimeoutError') {
    return { kind: 'unavailable', reason: 'no database connection became free in time' };
  }
  return null;
}

export function uniqueKeyByConstraint(constraint: unknown): UniqueKey | undefined {
  return UNIQUE_KEYS.find((key) => key.constraint === constraint);
}

export function uniqueKeyByColumns(table: string, columns: readonly string[]): UniqueKey | undefined {
  return UNIQUE_KEYS.find(
    (key) =>
      key.table === table &&
      key.columns.length === columns.length &&
      key.columns.every((column, index) => column === columns[index]),
  );
}

/**
 * The error a caller sees. Domain errors pass through; classified failures become domain errors
 * (or, for integrity failures, a plain error that names no vendor code); anything else is a bug
 * such as bad SQL and propagates unchanged.
 */
export function toDomainError(error: unknown, failure: StoreFailure | null): unknown {
  if (isDomainError(error) || failure === null) return error;
  switch (failure.kind) {
    case 'unique':
      return failure.key
        ? new ConflictError(failure.key.code, failure.key.message, { cause: error })
        : new ConflictError('already_exists', 'a record with the same key already exists', { cause: error });
    case 'foreign_key':
      return new ConflictError('referenced_record_missing', 'the record refers to a record that does not exist', {
        cause: error,
      });
    case 'integrity':
      return new Error(`the database refused an invalid record (${failure.constraint}); this is a bug`, {
        cause: error,
      });
    case 'unavailable':
      return new UnavailableError('database_unavailable', failure.reason, { cause: error });
    default: {
      const unreachable: never = failure;
      return unreachable;
    }
  }
}
