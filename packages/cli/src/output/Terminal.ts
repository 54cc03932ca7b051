import type { Readable, Writable } from 'node:stream';
import pc from 'picocolors';

export type Colours = ReturnType<typeof pc.createColors>;

/** The streams and environment a command runs with (clipanion's context, or a test's). */
export interface TerminalContext {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean; columns?: number };
  env: Record<string, string | undefined>;
}

/**
 * Colour only for a terminal, and never when `NO_COLOR` is set (no-color.org); `FORCE_COLOR`
 * turns it on for a pipe (useful in CI logs that render ANSI).
 */
export function colourEnabled(stream: unknown, env: Record<string, string | undefined>): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true;
  return (stream as { isTTY?: boolean }).isTTY === true && env.TERM !== 'dumb';
}

/** Output for people on stdout, diagnostics on stderr, each with its own colour decision. */
export class Terminal {
  /** Colours for what goes to stdout. */
  readonly out: Colours;
  /** Colours for what goes to stderr. */
  readonly err: Colours;
  readonly interactive: boolean;

  constructor(readonly context: TerminalContext) {
    this.out = pc.createColors(colourEnabled(context.stdout, context.env));
    this.err = pc.createColors(colourEnabled(context.stderr, context.env));
    this.interactive = context.stdin.isTTY === true && context.stderr.isTTY === true;
  }

  /** A line (or several) of output on stdout. */
  print(text = ''): void {
    this.context.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Machine-readable output: pretty JSON on stdout. */
  printJson(value: unknown): void {
    this.context.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** A diagnostic line on stderr. */
  note(text: string): void {
    this.context.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  success(text: string): void {
    this.note(`${this.err.green('✓')} ${text}`);
  }

  warn(text: string): void {
    this.note(`${this.err.yellow('!')} ${this.err.yellow(text)}`);
  }

  /** The one line an error becomes. */
  error(text: string): void {
    this.note(`${this.err.red(this.err.bold('Error:'))} ${text}`);
  }

  /** True when stderr can redraw a line in place (spinners). */
  get canAnimate(): boolean {
    return this.context.stderr.isTTY === true && this.context.env.TERM !== 'dumb';
  }
}
