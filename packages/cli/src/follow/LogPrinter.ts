import type { LogEntryView as LogChunk } from '@trellis/client';
import type { Writable } from 'node:stream';
import type { Colours } from '../output/Terminal.js';

/**
 * Writes log chunks as they arrive. STDOUT text is written as is; STDERR lines are red and SYSTEM
 * lines (from the agent itself) dimmed, or, without colour, prefixed `stderr| ` and `system| `.
 * Chunks may end mid-line: a line is prefixed once, and a change of stream mid-line starts a new
 * line, so the streams never run together.
 */
export class LogPrinter {
  private atLineStart = true;
  private lastStream: LogChunk['stream_type'] | null = null;
  private paused = false;
  private readonly held: LogChunk[] = [];

  constructor(
    private readonly output: Writable,
    private readonly colours: Colours,
  ) {}

  write(chunk: LogChunk): void {
    if (this.paused) this.held.push(chunk);
    else this.render(chunk);
  }

  /** Holds chunks back (while a question is on screen). */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    for (const chunk of this.held.splice(0)) this.render(chunk);
  }

  /** Ends a last line that had no newline. */
  finish(): void {
    this.resume();
    if (!this.atLineStart) this.output.write('\n');
    this.atLineStart = true;
  }

  private render(chunk: LogChunk): void {
    const stream = chunk.stream_type;
    if (!this.atLineStart && stream !== this.lastStream) {
      this.output.write('\n');
      this.atLineStart = true;
    }
    this.lastStream = stream;
    for (const piece of chunk.log_chunk.split(/(?<=\n)/)) {
      if (piece === '') continue;
      const newline = piece.endsWith('\n');
      const text = newline ? piece.slice(0, -1) : piece;
      const prefix = this.atLineStart ? this.prefix(stream) : '';
      this.output.write(`${prefix}${this.paint(stream, text)}${newline ? '\n' : ''}`);
      this.atLineStart = newline;
    }
  }

  private prefix(stream: LogChunk['stream_type']): string {
    if (this.colours.isColorSupported || stream === 'STDOUT') return '';
    return stream === 'STDERR' ? 'stderr| ' : 'system| ';
  }

  private paint(stream: LogChunk['stream_type'], text: string): string {
    if (text === '') return text;
    if (stream === 'STDERR') return this.colours.red(text);
    if (stream === 'SYSTEM') return this.colours.dim(text);
    return text;
  }
}
