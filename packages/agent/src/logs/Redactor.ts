/** What a secret turns into before a log line leaves the machine. */
export const REDACTED = '***';

/** Shorter values are not secrets worth hiding and would mask ordinary text ("a", "no"). */
export const MIN_SECRET_LENGTH = 4;

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The values that must never appear in a job's log: sensitive variables, the assumed cloud
 * credentials, the worker token. Values may be added while the job runs (credentials arrive
 * after the first lines).
 */
export class SecretSet {
  private readonly values = new Set<string>();
  private pattern: RegExp | null = null;
  private longest = 0;

  add(value: string | null | undefined): void {
    if (typeof value !== 'string') return;
    // A multi-line value is matched line by line, because the log is redacted a line at a time.
    const parts = value.includes('\n') ? [value, ...value.split(/\r?\n/)] : [value];
    let changed = false;
    for (const part of parts) {
      if (part.length < MIN_SECRET_LENGTH || part.includes('\n') || this.values.has(part)) continue;
      this.values.add(part);
      changed = true;
    }
    if (!changed) return;
    const sorted = [...this.values].sort((a, b) => b.length - a.length);
    this.longest = sorted[0]?.length ?? 0;
    this.pattern = new RegExp(sorted.map(escapeRegExp).join('|'), 'g');
  }

  get size(): number {
    return this.values.size;
  }

  /** Length of the longest secret: a tail this long minus one may be the start of a secret. */
  get maxLength(): number {
    return this.longest;
  }

  redact(text: string): string {
    if (!this.pattern || text === '') return text;
    return text.replace(this.pattern, REDACTED);
  }

  /** Start and end of every secret found in `text`, in order. */
  matches(text: string): Array<[number, number]> {
    if (!this.pattern) return [];
    const found: Array<[number, number]> = [];
    this.pattern.lastIndex = 0;
    for (const match of text.matchAll(this.pattern)) {
      found.push([match.index, match.index + match[0].length]);
    }
    return found;
  }
}

/**
 * Redacts one output stream that arrives in arbitrary pieces. Complete lines are redacted and
 * released at once; a partial line is held until its newline, except that `drain()` (and a
 * partial line over `maxHeld` characters) releases all of it but a tail short enough to be the
 * beginning of a secret, so a value split across two reads is still caught.
 */
export class StreamRedactor {
  private held = '';

  constructor(
    private readonly secrets: SecretSet,
    private readonly maxHeld = 64 * 1024,
  ) {}

  push(text: string): string {
    this.held += text;
    let out = '';
    const newline = this.held.lastIndexOf('\n');
    if (newline >= 0) {
      out = this.secrets.redact(this.held.slice(0, newline + 1));
      this.held = this.held.slice(newline + 1);
    }
    if (this.held.length > this.maxHeld) out += this.drain();
    return out;
  }

  /** Releases what can be released of a partial line without risking half a secret. */
  drain(): string {
    if (this.held === '') return '';
    let cut = this.held.length - Math.max(0, this.secrets.maxLength - 1);
    if (cut <= 0) return '';
    for (const [start, end] of this.secrets.matches(this.held)) {
      if (start < cut && cut < end) cut = end;
    }
    const out = this.secrets.redact(this.held.slice(0, cut));
    this.held = this.held.slice(cut);
    return out;
  }

  /** Everything left, at the end of the stream. */
  end(): string {
    const out = this.secrets.redact(this.held);
    this.held = '';
    return out;
  }
}
