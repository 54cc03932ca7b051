import { ValidationError } from '../domain/errors.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
/** `serial` and `lineage` are short; a longer value is not one the engine wrote. */
const MAX_CAPTURED_VALUE = 1024;
const CAPTURED_KEYS: ReadonlySet<string> = new Set(['serial', 'lineage']);

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

function invalidState(): ValidationError {
  return new ValidationError('the state must be a JSON object with a serial and a lineage', [], 'invalid_state_file');
}

/**
 * Reads a state file's top-level `serial` and `lineage` as its bytes stream past, holding only
 * those two values, so a state is stored without being held in memory whole. It checks the shape
 * the version record needs (one JSON object, strings and brackets balanced, nothing after it), not
 * every detail of JSON: the engine wrote the file and reads it back itself.
 */
export class StateHeaderScanner {
  private depth = 0;
  private started = false;
  private ended = false;
  private invalid = false;
  private inString = false;
  private escaped = false;
  private expectKey = false;
  /** Bytes of the top-level key being read. */
  private key: number[] | null = null;
  private lastKey: string | null = null;
  /** Raw bytes of the top-level value of a captured key. */
  private value: number[] | null = null;
  private readonly values = new Map<string, string>();

  push(chunk: Uint8Array): void {
    for (const byte of chunk) {
      if (this.invalid) return;
      this.byte(byte);
    }
  }

  /** Once the body ended: the header, or `400 invalid_state`. */
  header(): { serial: number; lineage: string } {
    if (this.invalid || !this.ended) throw invalidState();
    const serial = parseJson(this.values.get('serial'));
    const lineage = parseJson(this.values.get('lineage'));
    if (!Number.isSafeInteger(serial) || typeof lineage !== 'string') throw invalidState();
    return { serial: serial as number, lineage };
  }

  private byte(byte: number): void {
    if (this.inString) {
      this.stringByte(byte);
      return;
    }
    if (isWhitespace(byte)) return;
    if (this.ended) {
      this.invalid = true;
      return;
    }
    if (!this.started) {
      this.started = true;
      this.invalid = byte !== OPEN_OBJECT;
      this.depth = 1;
      this.expectKey = true;
      return;
    }
    if (this.depth === 1) {
      if (byte === COMMA || byte === CLOSE_OBJECT) {
        this.endValue();
        this.expectKey = byte === COMMA;
        if (byte === CLOSE_OBJECT) {
          this.depth = 0;
          this.ended = true;
        }
        return;
      }
      if (this.expectKey) {
        if (byte !== QUOTE) this.invalid = true;
        this.inString = true;
        this.key = [];
        return;
      }
      if (byte === COLON && this.lastKey !== null && this.value === null) {
        if (CAPTURED_KEYS.has(this.lastKey)) this.value = [];
        return;
      }
      if (byte === CLOSE_ARRAY) {
        this.invalid = true;
        return;
      }
    }
    if (byte === QUOTE) this.inString = true;
    else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) this.depth += 1;
    else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) this.depth -= 1;
    this.capture(byte);
  }

  private stringByte(byte: number): void {
    if (this.escaped) this.escaped = false;
    else if (byte === BACKSLASH) this.escaped = true;
    else if (byte === QUOTE) {
      this.inString = false;
      if (this.key) {
        const key = parseJson(`"${Buffer.from(this.key).toString('utf8')}"`);
        this.lastKey = typeof key === 'string' ? key : null;
        this.key = null;
        this.expectKey = false;
        return;
      }
    }
    if (this.key) this.key.push(byte);
    else this.capture(byte);
  }

  private capture(byte: number): void {
    if (this.value === null) return;
    if (this.value.length >= MAX_CAPTURED_VALUE) this.invalid = true;
    else this.value.push(byte);
  }

  private endValue(): void {
    if (this.value !== null && this.lastKey !== null) {
      this.values.set(this.lastKey, Buffer.from(this.value).toString('utf8'));
    }
    this.value = null;
    this.lastKey = null;
  }
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
