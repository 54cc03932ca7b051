/**
 * Where to go after signing in, if it is a path of this site: `/x` but not `//host` or `/\host`
 * (browsers read both as another host), and no control characters.
 */
export function safeNext(value: unknown, fallback = '/'): string {
  if (typeof value !== 'string' || value.length > 2000) return fallback;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (!/^\/(?![/\\])[^\\\u0000-\u001f\u007f]*$/.test(value)) return fallback;
  return value;
}

/** `/signin?next=…` for the page being asked for. */
export function signInPath(next: string): string {
  return next === '/' ? '/signin' : `/signin?next=${encodeURIComponent(next)}`;
}
