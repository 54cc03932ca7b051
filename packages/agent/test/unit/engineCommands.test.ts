import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/Engine.js';
import { JobInterrupted } from '../../src/job/errors.js';
import type { JobLog } from '../../src/logs/JobLog.js';

const dir = mkdtempSync(join(tmpdir(), 'trellis-agent-engine-commands-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * An engine that records each command it runs in `calls`; `apply` says it started (the file
 * `applying`) and holds until the file `go` exists, then records that it ended.
 */
function fakeEngine(name: string): { bin: string; calls: () => string[]; cwd: string } {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const bin = join(cwd, 'engine.sh');
  writeFileSync(
    bin,
    `#!/bin/sh
echo "$1" >> calls
if [ "$1" = apply ]; then
  touch applying
  while [ ! -f go ]; do sleep 0.05; done
  echo applied >> calls
fi
exit 0
`,
  );
  chmodSync(bin, 0o755);
  const calls = () =>
    existsSync(join(cwd, 'calls')) ? readFileSync(join(cwd, 'calls'), 'utf8').trim().split('\n') : [];
  return { bin, calls, cwd };
}

/** The part of the job log the engine writes to. */
function quietLog(): JobLog {
  return {
    write() {},
    system() {},
    endStreams() {},
    full: false,
    waitForRoom: async () => {},
    firstError: null,
  } as unknown as JobLog;
}

async function until(check: () => boolean): Promise<void> {
  // Bounds a hang only.
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("the engine's commands", () => {
  it('after stopAfterCurrent, the running apply goes on to its end and no command starts after it', async () => {
    const { bin, calls, cwd } = fakeEngine('finish');
    const engine = new Engine({ bin, cwd, env: {}, log: quietLog(), graceMs: 1000, lockTimeoutS: 1 });
    const applying = engine.apply('plan.out');
    await until(() => existsSync(join(cwd, 'applying')));
    expect(engine.running).toBe('apply');
    engine.stopAfterCurrent();
    writeFileSync(join(cwd, 'go'), '');
    await applying;
    expect(engine.running).toBeNull();
    await expect(engine.outputsJson()).rejects.toBeInstanceOf(JobInterrupted);
    expect(calls()).toEqual(['apply', 'applied']);
  });

  it('waits for beforeCommand before each command starts', async () => {
    const { bin, calls, cwd } = fakeEngine('gate');
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const asked: string[] = [];
    const engine = new Engine({
      bin,
      cwd,
      env: {},
      log: quietLog(),
      graceMs: 1000,
      lockTimeoutS: 1,
      beforeCommand: (command) => {
        asked.push(command);
        return gate;
      },
    });
    const init = engine.init();
    await new Promise((resolve) => setImmediate(resolve));
    expect(asked).toEqual(['init']);
    expect(calls()).toEqual([]);
    open();
    await init;
    expect(calls()).toEqual(['init']);
  });

  it('starts no command after an interrupt that came while it waited at the gate', async () => {
    const { bin, calls, cwd } = fakeEngine('interrupted-at-gate');
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const engine = new Engine({
      bin,
      cwd,
      env: {},
      log: quietLog(),
      graceMs: 1000,
      lockTimeoutS: 1,
      beforeCommand: () => gate,
    });
    const plan = engine.plan('plan.out');
    engine.interrupt();
    open();
    await expect(plan).rejects.toBeInstanceOf(JobInterrupted);
    expect(calls()).toEqual([]);
  });
});
