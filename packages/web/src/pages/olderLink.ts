import type { PageResult } from '@trellis/core';
import { type Html, html } from '../html.js';

/**
 * The "Older" link under a paged list (issue 10 §2): the same page path with its filters, the
 * next cursor and the page size; nothing on the last page.
 */
export function olderLink(
  href: string,
  page: Pick<PageResult<unknown>, 'next_cursor' | 'limit'>,
  filters: Record<string, string | undefined> = {},
): Html {
  if (page.next_cursor === null) return html``;
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value !== undefined) query.set(name, value);
  query.set('cursor', page.next_cursor);
  query.set('limit', String(page.limit));
  return html`<p class="pager"><a rel="next" data-older href="${href}?${query.toString()}">Older →</a></p>`;
}
