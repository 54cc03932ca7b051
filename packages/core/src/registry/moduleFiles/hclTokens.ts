/**
 * The tokens of HCL native syntax (hashicorp/hcl `hclsyntax/spec.md`) that the module reader
 * needs: enough to find blocks and attributes and to tell where an expression ends. Templates
 * (`"…${…}…"`, heredocs) are one token each, their interpolations skipped with their nesting, so
 * a brace inside a string never closes a block.
 */

export type HclTokenKind =
  | 'ident'
  | 'number'
  /** A quoted string; `value` is its text with escapes applied, `template` when it interpolates. */
  | 'string'
  | 'heredoc'
  | 'newline'
  | 'punct'
  | 'eof';

export interface HclToken {
  kind: HclTokenKind;
  /** The identifier, the punctuation, or a string's decoded text. */
  value: string;
  /** A string or heredoc holding `${` or `%{`: not a literal. */
  template: boolean;
  /** Offsets in the source, for the text of an expression. */
  start: number;
  end: number;
  line: number;
}

/** A file the reader cannot read as HCL, with the line it stopped at. */
export class HclSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
    this.name = 'HclSyntaxError';
  }
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };
const TWO_CHAR_OPERATORS = new Set(['==', '!=', '<=', '>=', '&&', '||', '=>', '...']);

/** Splits HCL source into tokens; comments are dropped (a `#` or `//` comment keeps its newline). */
export function tokenize(source: string): HclToken[] {
  const tokens: HclToken[] = [];
  let at = 0;
  let line = 1;
  const push = (kind: HclTokenKind, value: string, start: number, template = false) =>
    tokens.push({ kind, value, template, start, end: at, line });

  while (at < source.length) {
    const char = source[at] as string;
    const start = at;
    if (char === '\n') {
      at += 1;
      push('newline', '\n', start);
      line += 1;
    } else if (char === ' ' || char === '\t' || char === '\r' || char === '\uFEFF') {
      at += 1;
    } else if (char === '#' || source.startsWith('//', at)) {
      while (at < source.length && source[at] !== '\n') at += 1;
    } else if (source.startsWith('/*', at)) {
      const close = source.indexOf('*/', at + 2);
      if (close < 0) throw new HclSyntaxError('a /* comment is never closed', line);
      line += countLines(source.slice(at, close));
      at = close + 2;
    } else if (char === '"') {
      const read = readQuoted(source, at, line);
      at = read.end;
      push('string', read.value, start, read.template);
      line = read.line;
    } else if (source.startsWith('<<', at) && /^<<-?[A-Za-z_]/.test(source.slice(at, at + 4))) {
      const read = readHeredoc(source, at, line);
      at = read.end;
      push('heredoc', read.value, start, read.template);
      line = read.line;
    } else if (/[A-Za-z_]/.test(char)) {
      while (at < source.length && /[A-Za-z0-9_-]/.test(source[at] as string)) at += 1;
      push('ident', source.slice(start, at), start);
    } else if (/[0-9]/.test(char)) {
      const match = /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(source.slice(at)) as RegExpExecArray;
      at += match[0].length;
      push('number', match[0], start);
    } else {
      const three = source.slice(at, at + 3);
      const two = source.slice(at, at + 2);
      const operator = TWO_CHAR_OPERATORS.has(three) ? three : TWO_CHAR_OPERATORS.has(two) ? two : char;
      at += operator.length;
      push('punct', operator, start);
    }
  }
  tokens.push({ kind: 'eof', value: '', template: false, start: at, end: at, line });
  return tokens;
}

function countLines(text: string): number {
  let lines = 0;
  for (const char of text) if (char === '\n') lines += 1;
  return lines;
}

/** A quoted template from its opening quote: its decoded text, and where it ends. */
function readQuoted(
  source: string,
  open: number,
  line: number,
): { value: string; template: boolean; end: number; line: number } {
  let at = open + 1;
  let value = '';
  let template = false;
  while (at < source.length) {
    const char = source[at] as string;
    if (char === '"') return { value, template, end: at + 1, line };
    if (char === '\n') throw new HclSyntaxError('a quoted string runs past the end of its line', line);
    if (char === '\\') {
      const next = source[at + 1] ?? '';
      if (next === 'u' || next === 'U') {
        const digits = next === 'u' ? 4 : 8;
        const hex = source.slice(at + 2, at + 2 + digits);
        if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== digits) {
          throw new HclSyntaxError(`a \\${next} escape needs ${digits} hex digits`, line);
        }
        value += String.fromCodePoint(Number.parseInt(hex, 16));
        at += 2 + digits;
        continue;
      }
      const escaped = ESCAPES[next];
      if (escaped === undefined) throw new HclSyntaxError(`\\${next} is not an escape of HCL`, line);
      value += escaped;
      at += 2;
      continue;
    }
    if ((char === '$' || char === '%') && source[at + 1] === char && source[at + 2] === '{') {
      // `$${` and `%%{` are the literal `${` and `%{`.
      value += `${char}{`;
      at += 3;
      continue;
    }
    if ((char === '$' || char === '%') && source[at + 1] === '{') {
      template = true;
      const close = skipInterpolation(source, at + 2, line);
      value += source.slice(at, close.end);
      at = close.end;
      line = close.line;
      continue;
    }
    value += char;
    at += 1;
  }
  throw new HclSyntaxError('a quoted string is never closed', line);
}

/** From just inside `${`: past its matching `}`, strings inside it included. */
function skipInterpolation(source: string, from: number, line: number): { end: number; line: number } {
  let depth = 1;
  let at = from;
  while (at < source.length) {
    const char = source[at] as string;
    if (char === '\n') line += 1;
    if (char === '"') {
      const inner = readQuoted(source, at, line);
      at = inner.end;
      line = inner.line;
      continue;
    }
    if (char === '{') depth += 1;
    if (char === '}') {
      depth -= 1;
      if (depth === 0) return { end: at + 1, line };
    }
    at += 1;
  }
  throw new HclSyntaxError('an interpolation ${ is never closed', line);
}

/**
 * `<<EOF` … `EOF` or `<<-EOF` (the lines' common indentation removed): the text between the
 * marker's line and the line holding only the marker.
 */
function readHeredoc(
  source: string,
  open: number,
  line: number,
): { value: string; template: boolean; end: number; line: number } {
  const header = /^<<(-?)([A-Za-z_][A-Za-z0-9_-]*)[ \t]*\r?\n/.exec(source.slice(open));
  if (!header) throw new HclSyntaxError('a heredoc marker must end its line', line);
  const [whole, dash, marker] = header as unknown as [string, string, string];
  let at = open + whole.length;
  let current = line + 1;
  const lines: string[] = [];
  while (at <= source.length) {
    const newline = source.indexOf('\n', at);
    const lineEnd = newline < 0 ? source.length : newline;
    const text = source.slice(at, lineEnd).replace(/\r$/, '');
    if (text.trim() === marker) {
      const body = dash === '-' ? dedent(lines) : lines;
      const value = body.length === 0 ? '' : `${body.join('\n')}\n`;
      return { value, template: /[$%]\{/.test(value.replace(/([$%])\1\{/g, '')), end: lineEnd, line: current };
    }
    lines.push(text);
    if (newline < 0) break;
    at = newline + 1;
    current += 1;
  }
  throw new HclSyntaxError(`the heredoc ${marker} is never closed`, line);
}

function dedent(lines: string[]): string[] {
  const indents = lines.filter((text) => text.trim() !== '').map((text) => /^[ \t]*/.exec(text)?.[0].length ?? 0);
  const strip = indents.length === 0 ? 0 : Math.min(...indents);
  return lines.map((text) => text.slice(strip));
}
