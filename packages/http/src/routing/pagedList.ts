import type { PageResult } from '@trellis/core';
import type { Request } from 'express';
import type { HandlerResult } from './route.js';

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
export function pagedList(
  req: Request,
  key: string,
  page: PageResult<unknown>,
  extra: Record<string, unknown> = {},
): HandlerResult {
  const headers: Record<string, string> = {};
  if (page.next_cursor !== null) headers.Link = `<${nextPageUrl(req, page.next_cursor, page.limit)}>; rel="next"`;
  return { status: 200, body: { [key]: page.items, ...extra }, headers };
}

/** How a list endpoint documents its `Link` header. */
export const PAGED_LIST_DESCRIPTION =
  'Newest first, one page at a time: `limit` (1 to 200, default 50, unless the server sets other bounds) and an opaque `cursor`. When more follow, the `Link: <…>; rel="next"` header (RFC 8288) gives the URL of the next page; it is absent on the last page.';

/** The `Link` header of a paged list's 200 answer, for its response spec. */
export const PAGED_LIST_HEADERS = {
  Link: {
    description:
      'RFC 8288: `<URL of the next page>; rel="next"`, with the same filters and limit; absent on the last page',
  },
};
