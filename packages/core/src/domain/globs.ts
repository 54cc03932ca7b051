/**
 * Repository path globs, as a connection's `paths` name them (issue 13): matched against the
 * whole path from the repository's root, dot files included, with
 *
 * - `*` any characters but `/`, `?` one character but `/`;
 * - `**` as a whole segment: any number of segments, none included (`infra/**`, `**\/*.tf`,
 *   `a/**\/b`);
 * - `[abc]`, `[a-z]`, `[!abc]` (or `[^abc]`) one character of (or not of) a set;
 * - `{a,b}` either alternative (alternatives may hold globs, not further braces);
 * - `\x` the character `x` itself; anything else stands for itself.
 *
 * Core depends on no package, so this small matcher takes the place of a glob library.
 */

/** A test of repository paths against globs: true when any of them matches. */
export function globMatcher(patterns: readonly string[]): (path: string) => boolean {
  const regexes = patterns.map((pattern) => globRegExp(pattern));
  return (path) => {
    const normalized = path.replace(/^\/+/, '');
    return regexes.some((regex) => regex.test(normalized));
  };
}

/** The regular expression of one glob (anchored at both ends). */
export function globRegExp(pattern: string): RegExp {
  const glob = pattern.replace(/^\/+/, '');
  try {
    return new RegExp(`^${translate(glob, false)}$`);
  } catch {
    // A set the engine refuses (`[z-a]`) stands for itself, like an unclosed one.
    return new RegExp(`^${[...glob].map(literal).join('')}$`);
  }
}

function translate(pattern: string, inBraces: boolean): string {
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const char = pattern[i] as string;
    if (char === '\\' && i + 1 < pattern.length) {
      out += literal(pattern[i + 1] as string);
      i += 2;
      continue;
    }
    if (char === '*') {
      if (pattern[i + 1] === '*') {
        const atStart = i === 0 || pattern[i - 1] === '/';
        let end = i + 2;
        while (pattern[end] === '*') end += 1;
        const atEnd = end === pattern.length || pattern[end] === '/';
        if (atStart && atEnd) {
          if (end === pattern.length) {
            // `a/**`: everything under a (and, as globs usually do, `a` itself).
            if (out.endsWith('/')) out = `${out.slice(0, -1)}(?:/.*)?`;
            else out += '.*';
          } else {
            // `**/` : any number of leading segments, none included.
            out += '(?:[^/]*/)*';
            end += 1;
          }
          i = end;
          continue;
        }
        i = end;
        out += '[^/]*';
        continue;
      }
      out += '[^/]*';
      i += 1;
      continue;
    }
    if (char === '?') {
      out += '[^/]';
      i += 1;
      continue;
    }
    if (char === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close !== -1) {
        let body = pattern.slice(i + 1, close);
        const negated = body.startsWith('!') || body.startsWith('^');
        if (negated) body = body.slice(1);
        const set = body.replace(/[\\\]^]/g, (c) => `\\${c}`);
        out += negated ? `[^/${set}]` : `[${set}]`;
        i = close + 1;
        continue;
      }
    }
    if (char === '{' && !inBraces) {
      const close = pattern.indexOf('}', i + 1);
      if (close !== -1) {
        const alternatives = pattern.slice(i + 1, close).split(',');
        out += `(?:${alternatives.map((alternative) => translate(alternative, true)).join('|')})`;
        i = close + 1;
        continue;
      }
    }
    out += literal(char);
    i += 1;
  }
  return out;
}

function literal(char: string): string {
  return /[.*+?^${}()|[\]\\]/.test(char) ? `\\${char}` : char;
}
