import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EngineProcess } from '../../src/engine/EngineProcess.js';
import type { OutputSink } from '../../src/logs/JobLog.js';

const dir = mkdtempSync(join(tmpdir(), 'trellis-agent-engine-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function script(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

class RecordingSink implements OutputSink {
  readonly parts: Array<['STDOUT' | 'STDERR', string]> = [];
  full = false;
  private release: (() => void) | null = null;
  write(stream: 'STDOUT' | 'STDERR', text: string): void {
    this.parts.push([stream, text]);
  }
  waitForRoom(): Promise<void> {
    return new Promise((resolve) => {
      this.release = resolve;
    });
  }
  open(): void {
    this.full = false;
    this.release?.();
  }
  text(stream: 'STDOUT' | 'STDERR'): string {
    return this.parts
      .filter(([s]) => s === stream)
      .map(([, t]) => t)
      .join('');
  }
}

/** Waits for a file to appear (a script's "I am ready" signal), polling. */
async function waitForFile(path: string): Promise<void> {
  for (let i = 0; i < 500 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 20));
}

describe('the engine process', () => {
  it('streams stdout and stderr to the sink and reports the exit code', async () => {
    const bin = script('ok.sh', 'echo out-1; echo err-1 >&2; printf "été\\n"; exit 3');
    const sink = new RecordingSink();
    const exit = await new EngineProcess({ bin, args: [], cwd: dir, env: {}, sink, graceMs: 1000 }).wait();
    expect(exit).toMatchObject({ code: 3, interrupted: false, killed: false });
    expect(sink.text('STDOUT')).toBe('out-1\nété\n');
    expect(sink.text('STDERR')).toBe('err-1\n');
  });

  it('keeps stdout out of the log when capturing it', async () => {
    const bin = script('json.sh', 'echo \'{"a":1}\'; echo note >&2');
    const sink = new RecordingSink();
    const exit = await new EngineProcess({
      bin,
      args: [],
      cwd: dir,
      env: {},
      sink,
      graceMs: 1000,
      captureStdout: true,
    }).wait();
    expect(exit.stdout).toBe('{"a":1}\n');
    expect(sink.text('STDOUT')).toBe('');
    expect(sink.text('STDERR')).toBe('note\n');
  });

  it('sends SIGINT on interrupt and lets the engine finish cleanly within the grace period', async () => {
    const ready = join(dir, 'ready-int');
    const bin = script(
      'int.sh',
      `trap 'echo "releasing lock"; exit 130' INT; touch ${ready}; while true; do sleep 0.1; done`,
    );
    const sink = new RecordingSink();
    const engine = new EngineProcess({ bin, args: [], cwd: dir, env: {}, sink, graceMs: 30_000 });
    await waitForFile(ready);
    engine.interrupt();
    const exit = await engine.wait();
    expect(exit).toMatchObject({ code: 130, interrupted: true, killed: false });
    expect(sink.text('STDOUT')).toContain('releasing lock');
  });

  it('kills the engine and its children when it ignores SIGINT past the grace period', async () => {
    const ready = join(dir, 'ready-stubborn');
    const childPid = join(dir, 'child.pid');
    const bin = script(
      'stubborn.sh',
      `trap '' INT; sleep 300 & echo $! > ${childPid}; touch ${ready}; while true; do sleep 0.1; done`,
    );
    const engine = new EngineProcess({ bin, args: [], cwd: dir, env: {}, sink: new RecordingSink(), graceMs: 200 });
    await waitForFile(ready);
    engine.interrupt();
    const exit = await engine.wait();
    expect(exit).toMatchObject({ signal: 'SIGKILL', interrupted: true, killed: true });
    const pid = Number(readFileSync(childPid, 'utf8'));
    // Dead, or a zombie waiting for whoever inherited it to reap it.
    const running = () => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 250 && running(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(running()).toBe(false);
  });

  it('stops reading while the sink is full, so the engine waits instead of the agent buffering', async () => {
    const bin = script('chatty.sh', 'i=0; while [ $i -lt 2000 ]; do echo "line $i of some length"; i=$((i+1)); done');
    const sink = new RecordingSink();
    sink.full = true;
    const engine = new EngineProcess({ bin, args: [], cwd: dir, env: {}, sink, graceMs: 1000 });
    await new Promise((r) => setTimeout(r, 300));
    // One read was taken before the pause; the rest waits in the pipe.
    expect(sink.parts.length).toBe(1);
    sink.open();
    const exit = await engine.wait();
    expect(exit.code).toBe(0);
    expect(sink.text('STDOUT').split('\n')).toHaveLength(2001);
  });

  it('fails to start a missing binary with its error', async () => {
    const engine = new EngineProcess({
      bin: join(dir, 'missing'),
      args: [],
      cwd: dir,
      env: {},
      sink: new RecordingSink(),
      graceMs: 1000,
    });
    await expect(engine.wait()).rejects.toThrow(/ENOENT/);
  });
});
