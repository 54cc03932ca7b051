import type { PageResult } from '@trellis/core';
import type { Request } from 'express';

/**
 * The URL of the next page: the request's own URL (with its mount prefix and filters) with the
 * next cursor and the page size. Path-absolute, which RFC 8288 resolves against the request.
 */
export function nextPageUrl(req: Request, cursor: string, limit: number): string {
  const url = new URL(req.originalUrl, 'http://trellis.invalid');
  url.searchParams.set('cursor', cursor);
  url.searchParams.set('limit', String(limit));
  return `${url.pathname}${url.search}`;
}

/**
 * The answer of a list endpoint: `{ [key]: items }` as before pagination (with `extra` fields the
 * list was asked for, such as the fleet's `counts`), and the next page announced in an RFC 8288
 * `Link` header (absent on the last page).
 */
export function pagedList<K extends string, T, E extends object = object>(
  req: Request,
  key: K,
  page: PageResult<T>,
  extra?: E,
): { status: 200; body: { [k in K]: T[] } & E; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  if (page.next_cursor !== null) headers.Link = `<${nextPageUrl(req, page.next_cursor, page.limit)}>; rel="next"`;
  return { status: 200, body: { [key]: page.items, ...extra } as { [k in K]: T[] } & E, headers };
}
