/** How a list operation documents its pages: newest first, a cursor, the next page in a `Link` header. */
export const PAGED_LIST_DESCRIPTION =
  'Newest first, one page at a time: `limit` (1 to 200, default 50, unless the server sets other bounds) and an opaque `cursor`. When more follow, the `Link: <…>; rel="next"` header (RFC 8288) gives the URL of the next page; it is absent on the last page.';

/** The `Link` header of a paged list's 200 answer, for its response spec. */
export const PAGED_LIST_HEADERS = {
  Link: {
    description:
      'RFC 8288: `<URL of the next page>; rel="next"`, with the same filters and limit; absent on the last page',
  },
};
