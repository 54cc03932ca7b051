import { mentionsDiskFull } from '../job/errors.js';
import type { LogShipper } from './LogShipper.js';
import { type SecretSet, StreamRedactor } from './Redactor.js';

/** Where the engine's output goes: written a piece at a time, with backpressure. */
export interface OutputSink {
  write(stream: 'STDOUT' | 'STDERR', text: string): void;
  readonly full: boolean;
  waitForRoom(): Promise<void>;
}

/** `Error: ...` as OpenTofu and Terraform print it, with or without the diagnostic box. */
const ERROR_LINE = /^[\s│╷╵]*(Error: .*\S)\s*$/;

/**
 * The log of one job as it leaves the machine: engine output and the agent's own SYSTEM lines,
 * each stream redacted before it is queued, shipped about once a second. It also remembers the
 * first `Error:` line of the engine's stderr for the job's error message.
 */
export class JobLog implements OutputSink {
  private readonly redactors: Record<'STDOUT' | 'STDERR', StreamRedactor>;
  private timer: NodeJS.Timeout | null = null;
  private errorLine: string | null = null;
  private stderrTail = '';
  /** The end of what was last scanned for a full disk, so a message cut between writes is found. */
  private diskTail = '';
  private diskFullSeen = false;
  private storageFullSeen = false;

  constructor(
    private readonly shipper: LogShipper,
    private readonly secrets: SecretSet,
    private readonly intervalMs = 1000,
  ) {
    this.redactors = { STDOUT: new StreamRedactor(secrets), STDERR: new StreamRedactor(secrets) };
  }

  start(): void {
    this.timer ??= setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  write(stream: 'STDOUT' | 'STDERR', text: string): void {
    const safe = (this.redactors[stream] as StreamRedactor).push(text);
    if (stream === 'STDERR') this.watchForError(safe);
    this.watchForDiskFull(safe);
    this.shipper.append(stream, safe);
  }

  /** A line of the agent's own, redacted like the rest. */
  system(line: string): void {
    this.flushPartialLines();
    this.shipper.append('SYSTEM', `${this.secrets.redact(line)}\n`);
  }

  get full(): boolean {
    return this.shipper.full;
  }

  waitForRoom(): Promise<void> {
    return this.shipper.waitForRoom();
  }

  /** The first `Error:` line the engine printed on stderr since the last `resetError()`. */
  get firstError(): string | null {
    return this.errorLine;
  }

  /** The engine printed that a disk is full (`no space left on device`, `disk quota exceeded`). */
  get sawDiskFull(): boolean {
    return this.diskFullSeen;
  }

  /** The engine's state backend was answered `507`: the control plane's artifact storage is full. */
  get sawStorageFull(): boolean {
    return this.storageFullSeen;
  }

  /** Ends the partial lines of the streams (an engine process exited). */
  endStreams(): void {
    for (const stream of ['STDOUT', 'STDERR'] as const) {
      const rest = (this.redactors[stream] as StreamRedactor).end();
      if (stream === 'STDERR') this.watchForError(`${rest}\n`);
      this.shipper.append(stream, rest);
    }
  }

  /** Ships everything and stops the timer. */
  async close(timeoutMs?: number): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.endStreams();
    await this.shipper.close(timeoutMs);
  }

  private tick(): void {
    this.flushPartialLines();
    void this.shipper.flush();
  }

  private flushPartialLines(): void {
    for (const stream of ['STDOUT', 'STDERR'] as const) {
      this.shipper.append(stream, (this.redactors[stream] as StreamRedactor).drain());
    }
  }

  private watchForDiskFull(text: string): void {
    if (text === '') return;
    const scanned = this.diskTail + text;
    this.diskFullSeen ||= mentionsDiskFull(scanned);
    // The engine's http backend says only the status of a refused state write.
    this.storageFullSeen ||= /HTTP error:? 507\b/.test(scanned);
    this.diskTail = scanned.slice(-64);
  }

  private watchForError(text: string): void {
    if (this.errorLine !== null || text === '') return;
    const lines = (this.stderrTail + text).split('\n');
    this.stderrTail = (lines.pop() ?? '').slice(-1000);
    for (const line of lines) {
      const match = ERROR_LINE.exec(line);
      if (match?.[1]) {
        this.errorLine = match[1];
        return;
      }
    }
  }
}
