import { ValidationError } from './errors.js';

/**
 * Keyset pagination of every list (issue 10 §2). Lists are newest first; a page ends at a
 * `PageKey`, and the next page holds what sorts strictly after it, so records created while a
 * client walks the pages (which sort before the first page) never shift or repeat what it reads.
 * The cursor a client sees is opaque: it is built and read only here.
 */
export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;

export interface PageLimits {
  /** Items per page when the request names no `limit`. */
  defaultLimit: number;
  /** The largest `limit` a request may ask for. */
  maxLimit: number;
}

export const DEFAULT_PAGE_LIMITS: PageLimits = { defaultLimit: DEFAULT_PAGE_LIMIT, maxLimit: MAX_PAGE_LIMIT };

/**
 * Where a page ends: the last record's sort time and its insertion sequence, which breaks ties
 * between records of the same time (later insertions sort first). Both come from the store.
 */
export interface PageKey {
  at: string;
  seq: number;
}

export interface PageRequest {
  limit: number;
  /** Absent: the first (newest) page. */
  after?: PageKey;
}

/** What a store returns: at most `limit` items, and the key to continue from when there are more. */
export interface Page<T> {
  items: T[];
  next: PageKey | null;
}

/** The query a list endpoint accepts, as received. */
export interface PageQuery {
  limit?: unknown;
  cursor?: unknown;
}

/** A page as use cases return it: the next page's opaque cursor, or null on the last page. */
export interface PageResult<T> {
  items: T[];
  /** The page size this request used, so the next page's URL can ask for the same. */
  limit: number;
  next_cursor: string | null;
}

export function encodeCursor(key: PageKey): string {
  return Buffer.from(JSON.stringify([key.at, key.seq]), 'utf8').toString('base64url');
}

/** `ValidationError` (400 `validation_failed`) for anything this module did not produce. */
export function decodeCursor(cursor: unknown): PageKey {
  const invalid = () =>
    new ValidationError('cursor is not a cursor this server gave out', [
      { path: 'cursor', message: 'invalid cursor; use the URL of the Link header as given' },
    ]);
  if (typeof cursor !== 'string' || cursor === '' || cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw invalid();
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) throw invalid();
  const [at, seq] = decoded as unknown[];
  if (typeof at !== 'string' || Number.isNaN(Date.parse(at)) || new Date(at).toISOString() !== at) throw invalid();
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) throw invalid();
  return { at, seq };
}

/** Reads `limit` (1..max, default) and `cursor` of a list request. */
export function pageRequest(query: PageQuery, limits: PageLimits = DEFAULT_PAGE_LIMITS): PageRequest {
  let limit = limits.defaultLimit;
  if (query.limit !== undefined && query.limit !== '') {
    const parsed = typeof query.limit === 'number' ? query.limit : Number(query.limit);
    if (!Number.isInteger(parsed) || parsed < 1 || parsed > limits.maxLimit) {
      throw new ValidationError(`limit must be an integer from 1 to ${limits.maxLimit}`, [
        { path: 'limit', message: `must be an integer from 1 to ${limits.maxLimit}` },
      ]);
    }
    limit = parsed;
  }
  if (query.cursor === undefined) return { limit };
  return { limit, after: decodeCursor(query.cursor) };
}

export function pageResult<T, U>(page: Page<T>, request: PageRequest, view: (item: T) => U): PageResult<U> {
  return {
    items: page.items.map(view),
    limit: request.limit,
    next_cursor: page.next === null ? null : encodeCursor(page.next),
  };
}

/**
 * Newest-first order of page keys, for stores that sort in code: negative when `a` comes first.
 * Times compare as instants.
 */
export function compareNewestFirst(a: PageKey, b: PageKey): number {
  const byTime = Date.parse(b.at) - Date.parse(a.at);
  return byTime !== 0 ? byTime : b.seq - a.seq;
}

/**
 * One page of records already in newest-first order (stores that sort in code): those after
 * `request.after`, at most `request.limit`, and the key of the last one when more follow.
 */
export function takePage<T>(sorted: readonly T[], keyOf: (item: T) => PageKey, request: PageRequest): Page<T> {
  const after = request.after;
  const rest = after === undefined ? sorted : sorted.filter((item) => compareNewestFirst(keyOf(item), after) > 0);
  const items = rest.slice(0, request.limit);
  const last = items[items.length - 1];
  return { items, next: rest.length > request.limit && last !== undefined ? keyOf(last) : null };
}
