/**
 * Column codecs. The two dialects store times and JSON differently (Postgres: timestamptz and
 * jsonb, which the pg driver returns as `Date` and parsed objects; SQLite: ISO text and JSON text),
 * so every value crosses the store boundary through one of these, and records always come back
 * in one shape: ISO-8601 UTC strings with milliseconds, parsed JSON, plain numbers.
 */

/** A row as a driver returns it; the stores map each one to a record field by field. */
export type Row = Record<string, unknown>;

/**
 * Times are written in one canonical form. Postgres parses it into timestamptz; SQLite keeps the
 * text, and because every stored time has the same fixed-width UTC form, comparing the text
 * (`last_heartbeat < ?`) compares the instants.
 */
export function timeIn(iso: string): string {
  return new Date(iso).toISOString();
}

export function timeInOrNull(iso: string | null): string | null {
  return iso === null ? null : timeIn(iso);
}

export function timeOut(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string' || typeof value === 'number') return new Date(value).toISOString();
  throw new TypeError(`expected a time column, got ${typeof value}`);
}

export function timeOutOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : timeOut(value);
}

/** JSON columns always hold objects; both dialects accept them as JSON text. */
export function jsonIn(value: unknown): string {
  return JSON.stringify(value);
}

/** jsonb arrives parsed from Postgres, JSON text from SQLite. */
export function jsonOut<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/** SQLite answers 0/1, Postgres a boolean. */
export function booleanOut(value: unknown): boolean {
  return value === true || value === 1 || value === '1';
}

/** Postgres returns bigint columns as strings so that no precision is lost; ours stay far below 2^53. */
export function integerOut(value: unknown): number {
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(number)) throw new TypeError(`expected an integer column, got ${String(value)}`);
  return number;
}

export function textOut(value: unknown): string {
  if (typeof value !== 'string') throw new TypeError(`expected a text column, got ${typeof value}`);
  return value;
}

export function textOutOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : textOut(value);
}

/** UUID columns: Postgres `uuid` prints lower case; SQLite keeps what it was given (already lower case). */
export function uuidOut(value: unknown): string {
  return textOut(value).toLowerCase();
}

export function uuidOutOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : uuidOut(value);
}
