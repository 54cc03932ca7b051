import { createInterface, type Interface } from 'node:readline';
import { InterruptedError } from '../errors.js';
import type { Terminal } from './Terminal.js';

/**
 * Reads answers a line at a time from stdin: from a person at a terminal, or from a pipe, so
 * scripts and tests can answer too. Lines that arrive before they are asked for are kept.
 */
export class Prompter {
  private readonly reader: Interface;
  private readonly lines: string[] = [];
  private waiting: { resolve: (line: string | null) => void; reject: (error: Error) => void } | null = null;
  private closed = false;

  constructor(private readonly terminal: Terminal) {
    const { stdin, stderr } = terminal.context;
    const tty = stdin.isTTY === true;
    this.reader = createInterface({
      input: stdin,
      ...(tty ? { output: stderr, terminal: true } : { terminal: false }),
    });
    this.reader.on('line', (line) => {
      if (this.waiting) {
        const { resolve } = this.waiting;
        this.waiting = null;
        resolve(line);
      } else this.lines.push(line);
    });
    this.reader.on('close', () => {
      this.closed = true;
      this.waiting?.resolve(null);
      this.waiting = null;
    });
    // At a terminal readline turns Ctrl-C into this event instead of a signal.
    this.reader.on('SIGINT', () => {
      const waiting = this.waiting;
      this.waiting = null;
      terminal.context.stderr.write('\n');
      waiting?.reject(new InterruptedError());
    });
  }

  /** The next line typed (trimmed), or null when stdin has ended. */
  ask(question: string): Promise<string | null> {
    this.terminal.context.stderr.write(question);
    const queued = this.lines.shift();
    if (queued !== undefined) {
      if (this.terminal.context.stdin.isTTY !== true) this.terminal.context.stderr.write('\n');
      return Promise.resolve(queued.trim());
    }
    if (this.closed) {
      this.terminal.context.stderr.write('\n');
      return Promise.resolve(null);
    }
    return new Promise((resolve, reject) => {
      this.waiting = {
        resolve: (line) => {
          if (this.terminal.context.stdin.isTTY !== true) this.terminal.context.stderr.write('\n');
          resolve(line === null ? null : line.trim());
        },
        reject,
      };
    });
  }

  /** A yes/no question; anything but y/yes is no. */
  async confirm(question: string): Promise<boolean> {
    const answer = await this.ask(`${question} [y/N] `);
    return answer !== null && /^y(es)?$/i.test(answer);
  }

  close(): void {
    this.reader.close();
  }
}
