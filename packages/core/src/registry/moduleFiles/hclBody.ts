import { HclSyntaxError, type HclToken, tokenize } from './hclTokens.js';

/** A JSON value an HCL literal expression stands for. */
export type HclLiteral = string | number | boolean | null | HclLiteral[] | { [key: string]: HclLiteral };

/** An attribute's expression: its source text, and its value when it is a literal (no reference, call or template). */
export interface HclExpression {
  text: string;
  /** Absent when the expression is not a literal (`var.x`, `list(string)`, `"${a}"`). */
  literal?: HclLiteral;
}

export interface HclBlock {
  type: string;
  labels: string[];
  body: HclBody;
  line: number;
}

export interface HclBody {
  attributes: Record<string, HclExpression>;
  blocks: HclBlock[];
}

const CLOSERS: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/**
 * Reads an HCL file's structure (hclsyntax: a body of attributes `name = expr` and blocks
 * `type "label" { … }`), keeping each expression's text and, for literals, its value. Throws
 * `HclSyntaxError` with the line where the file stops being HCL.
 */
export function parseHcl(source: string): HclBody {
  const parser = new BodyParser(source, tokenize(source));
  const body = parser.body(null);
  return body;
}

class BodyParser {
  private at = 0;

  constructor(
    private readonly source: string,
    private readonly tokens: HclToken[],
  ) {}

  /** Items until `}` (a block's body) or the end of the file (`closer` null). */
  body(closer: '}' | null): HclBody {
    const body: HclBody = { attributes: {}, blocks: [] };
    for (;;) {
      const token = this.next();
      if (token.kind === 'newline') continue;
      if (token.kind === 'eof') {
        if (closer !== null) throw new HclSyntaxError('a block is never closed', token.line);
        return body;
      }
      if (token.kind === 'punct' && token.value === '}' && closer === '}') return body;
      if (token.kind !== 'ident') throw new HclSyntaxError(`expected a name, found ${describe(token)}`, token.line);
      const after = this.peek();
      if (after.kind === 'punct' && after.value === '=') {
        this.next();
        body.attributes[token.value] = this.expression();
        continue;
      }
      body.blocks.push(this.block(token));
    }
  }

  private block(type: HclToken): HclBlock {
    const labels: string[] = [];
    for (;;) {
      const token = this.next();
      if (token.kind === 'string' && !token.template) labels.push(token.value);
      else if (token.kind === 'ident') labels.push(token.value);
      else if (token.kind === 'punct' && token.value === '{') break;
      else throw new HclSyntaxError(`expected a label or { after ${type.value}, found ${describe(token)}`, token.line);
    }
    return { type: type.value, labels, body: this.body('}'), line: type.line };
  }

  /**
   * An expression runs to the end of its line, or to the `}` closing the block it is in, newlines
   * inside brackets included.
   */
  private expression(): HclExpression {
    const first = this.peek();
    const open: string[] = [];
    const tokens: HclToken[] = [];
    for (;;) {
      const token = this.peek();
      if (token.kind === 'eof') break;
      if (open.length === 0 && (token.kind === 'newline' || (token.kind === 'punct' && token.value === '}'))) break;
      this.next();
      tokens.push(token);
      if (token.kind !== 'punct') continue;
      const closer = CLOSERS[token.value];
      if (closer) open.push(closer);
      else if (token.value === ')' || token.value === ']' || token.value === '}') {
        if (open.pop() !== token.value) throw new HclSyntaxError(`an unmatched ${token.value}`, token.line);
      }
    }
    if (open.length > 0) throw new HclSyntaxError(`a bracket is never closed (expected ${open.at(-1)})`, first.line);
    if (tokens.length === 0) throw new HclSyntaxError('an attribute has no value', first.line);
    const last = tokens.at(-1) as HclToken;
    const text = this.source.slice((tokens[0] as HclToken).start, last.end).trim();
    const literal = literalOf(tokens.filter((token) => token.kind !== 'newline'));
    return literal === NOT_LITERAL ? { text } : { text, literal };
  }

  private next(): HclToken {
    const token = this.tokens[this.at] as HclToken;
    if (token.kind !== 'eof') this.at += 1;
    return token;
  }

  private peek(): HclToken {
    return this.tokens[this.at] as HclToken;
  }
}

function describe(token: HclToken): string {
  if (token.kind === 'eof') return 'the end of the file';
  if (token.kind === 'newline') return 'the end of the line';
  if (token.kind === 'string' || token.kind === 'heredoc') return 'a string';
  return JSON.stringify(token.value);
}

const NOT_LITERAL = Symbol('not a literal');

/** The value of a literal expression's tokens, or NOT_LITERAL. */
function literalOf(tokens: HclToken[]): HclLiteral | typeof NOT_LITERAL {
  const reader = new LiteralReader(tokens);
  const value = reader.value();
  return value !== NOT_LITERAL && reader.done() ? value : NOT_LITERAL;
}

class LiteralReader {
  private at = 0;

  constructor(private readonly tokens: HclToken[]) {}

  done(): boolean {
    return this.at === this.tokens.length;
  }

  value(): HclLiteral | typeof NOT_LITERAL {
    const token = this.tokens[this.at];
    if (!token) return NOT_LITERAL;
    this.at += 1;
    if (token.kind === 'string' || token.kind === 'heredoc') return token.template ? NOT_LITERAL : token.value;
    if (token.kind === 'number') return Number(token.value);
    if (token.kind === 'ident') {
      if (token.value === 'true') return true;
      if (token.value === 'false') return false;
      if (token.value === 'null') return null;
      return NOT_LITERAL;
    }
    if (token.kind === 'punct' && token.value === '-') {
      const number = this.tokens[this.at];
      if (number?.kind !== 'number') return NOT_LITERAL;
      this.at += 1;
      return -Number(number.value);
    }
    if (token.kind === 'punct' && token.value === '[') return this.tuple();
    if (token.kind === 'punct' && token.value === '{') return this.object();
    return NOT_LITERAL;
  }

  private tuple(): HclLiteral | typeof NOT_LITERAL {
    const items: HclLiteral[] = [];
    for (;;) {
      if (this.punct(']')) return items;
      const item = this.value();
      if (item === NOT_LITERAL) return NOT_LITERAL;
      items.push(item);
      if (this.punct(']')) return items;
      if (!this.punct(',')) return NOT_LITERAL;
    }
  }

  private object(): HclLiteral | typeof NOT_LITERAL {
    const entries: Record<string, HclLiteral> = {};
    for (;;) {
      if (this.punct('}')) return entries;
      const key = this.tokens[this.at];
      if (!key || (key.kind !== 'ident' && (key.kind !== 'string' || key.template))) return NOT_LITERAL;
      this.at += 1;
      if (!this.punct('=') && !this.punct(':')) return NOT_LITERAL;
      const item = this.value();
      if (item === NOT_LITERAL) return NOT_LITERAL;
      entries[key.value] = item;
      // Items are separated by commas or newlines (newlines were dropped before reading).
      this.punct(',');
    }
  }

  private punct(value: string): boolean {
    const token = this.tokens[this.at];
    if (token?.kind !== 'punct' || token.value !== value) return false;
    this.at += 1;
    return true;
  }
}
