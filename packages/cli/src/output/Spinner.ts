import type { Terminal } from './Terminal.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * A one-line spinner on stderr for anything that waits. On a pipe it prints its text once
 * instead, so logs of scripted runs still say what was being waited for.
 */
export class Spinner {
  private timer: NodeJS.Timeout | null = null;
  private frame = 0;
  private readonly startedAt = Date.now();

  constructor(
    private readonly terminal: Terminal,
    private text: string,
  ) {}

  start(): this {
    if (!this.terminal.canAnimate) {
      this.terminal.note(this.text);
      return this;
    }
    this.render();
    this.timer = setInterval(() => this.render(), 100);
    this.timer.unref();
    return this;
  }

  update(text: string): void {
    this.text = text;
  }

  get running(): boolean {
    return this.timer !== null;
  }

  /** Erases the spinner line; what is printed next starts on a clean line. */
  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    this.terminal.context.stderr.write('\r\u001b[2K');
  }

  private render(): void {
    const seconds = Math.floor((Date.now() - this.startedAt) / 1000);
    const glyph = this.terminal.err.cyan(FRAMES[this.frame++ % FRAMES.length] ?? '');
    this.terminal.context.stderr.write(`\r\u001b[2K${glyph} ${this.text} ${this.terminal.err.dim(`(${seconds}s)`)}`);
  }
}
