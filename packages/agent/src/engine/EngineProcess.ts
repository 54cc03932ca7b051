import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { OutputSink } from '../logs/JobLog.js';

export interface EngineProcessOptions {
  bin: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  sink: OutputSink;
  /** Keep stdout instead of logging it (for `show -json`, `output -json`). */
  captureStdout?: boolean;
  /** After SIGINT, how long the engine gets to release its state lock before SIGKILL. */
  graceMs: number;
}

export interface EngineExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when the run was interrupted (SIGINT sent). */
  interrupted: boolean;
  /** True when the grace period ran out and the engine was killed. */
  killed: boolean;
  stdout: string;
}

/**
 * One run of the engine binary. Its output is decoded and handed to the sink as it arrives; when
 * the sink is full, reading pauses, so a chatty engine blocks on its pipe instead of filling the
 * agent's memory. `interrupt()` sends SIGINT, as a person pressing Ctrl-C would, and SIGKILL to
 * the whole process group if the engine has not exited within the grace period.
 *
 * The engine runs in its own process group, so a Ctrl-C meant for the agent does not reach it
 * directly: the agent decides how the job ends.
 */
export class EngineProcess {
  private readonly child: ChildProcess;
  private readonly exited: Promise<EngineExit>;
  private interrupted = false;
  private killed = false;
  private killTimer: NodeJS.Timeout | null = null;
  private captured: string[] = [];

  constructor(private readonly options: EngineProcessOptions) {
    this.child = spawn(options.bin, options.args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const spawned = new Promise<void>((resolve, reject) => {
      this.child.once('spawn', resolve);
      this.child.once('error', reject);
    });
    const streams = [
      this.pump(this.child.stdout as Readable, 'STDOUT'),
      this.pump(this.child.stderr as Readable, 'STDERR'),
    ];
    const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      this.child.once('close', (code, signal) => resolve({ code, signal })),
    );
    this.exited = spawned.then(async () => {
      const [{ code, signal }] = await Promise.all([closed, ...streams]);
      if (this.killTimer) clearTimeout(this.killTimer);
      return {
        code,
        signal,
        interrupted: this.interrupted,
        killed: this.killed,
        stdout: this.captured.join(''),
      };
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  wait(): Promise<EngineExit> {
    return this.exited;
  }

  /** SIGINT now, SIGKILL to the process group after the grace period. Idempotent. */
  interrupt(): void {
    if (this.interrupted || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.interrupted = true;
    this.child.kill('SIGINT');
    this.killTimer = setTimeout(() => this.kill(), this.options.graceMs);
    this.killTimer.unref();
  }

  /** SIGKILL to the engine and everything it started. */
  kill(): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.killed = true;
    try {
      if (this.child.pid !== undefined) process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      this.child.kill('SIGKILL');
    }
  }

  private async pump(stream: Readable, name: 'STDOUT' | 'STDERR'): Promise<void> {
    const decoder = new StringDecoder('utf8');
    const capture = name === 'STDOUT' && this.options.captureStdout === true;
    const { sink } = this.options;
    for await (const data of stream) {
      const text = decoder.write(data as Buffer);
      if (capture) this.captured.push(text);
      else sink.write(name, text);
      // Waiting here stops the iteration, which stops reading the pipe: the engine blocks.
      if (sink.full) await sink.waitForRoom();
    }
    const rest = decoder.end();
    if (capture) this.captured.push(rest);
    else if (rest) sink.write(name, rest);
  }
}
