/** The longest `next` accepted: a path on this site, never a document. */
const MAX_NEXT_LENGTH = 2048;

/**
 * The safe-redirect rule, the only one: `next` is a path on this origin. Refuses anything a
 * browser could read as another origin or mangle into one: `//host`, `/\host`, any backslash,
 * control characters (a browser drops tab and newline, so `/\t/host` becomes `//host`), schemes
 * and other absolute URLs (they do not start with `/`), and overlong values.
 */
export function isSafeNextPath(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length <= MAX_NEXT_LENGTH &&
    value.startsWith('/') &&
    !value.startsWith('//') &&
    !value.includes('\\') &&
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    !/[\u0000-\u001f\u007f]/.test(value)
  );
}

/** `next` when it is safe, else `fallback` (for pages that land somewhere harmless instead of failing). */
export function safeNextOr(value: unknown, fallback = '/'): string {
  return isSafeNextPath(value) ? value : fallback;
}
