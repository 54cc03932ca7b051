/**
 * The auth file lock: processes take turns, a lock left by a dead process is broken, a live one
 * is waited for and then reported.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withFileLock } from '../src/auth/FileLock.js';
import { CliError } from '../src/errors.js';

const LOCK_MODULE = fileURLToPath(new URL('../dist/auth/FileLock.js', import.meta.url));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-lock-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A process that increments a counter file `times` times, each read-wait-write under the lock. */
function incrementer(lock: string, counter: string, times: number): Promise<number | null> {
  const script = `
    import { readFileSync, writeFileSync } from 'node:fs';
    import { withFileLock } from ${JSON.stringify(LOCK_MODULE)};
    for (let i = 0; i < ${times}; i++) {
      await withFileLock(${JSON.stringify(lock)}, async () => {
        const n = Number(readFileSync(${JSON.stringify(counter)}, 'utf8'));
        await new Promise((resolve) => setTimeout(resolve, 3));
        writeFileSync(${JSON.stringify(counter)}, String(n + 1));
      }, { pollMs: 5 });
    }`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', resolve);
  });
}

describe('withFileLock', () => {
  it('serialises read-modify-write cycles of concurrent processes', async () => {
    const counter = join(dir, 'counter');
    writeFileSync(counter, '0');
    const codes = await Promise.all([1, 2, 3, 4].map(() => incrementer(join(dir, 'auth.json.lock'), counter, 15)));
    expect(codes).toEqual([0, 0, 0, 0]);
    expect(readFileSync(counter, 'utf8')).toBe('60');
    expect(existsSync(join(dir, 'auth.json.lock'))).toBe(false);
  });

  it('breaks a lock left by a process that no longer exists', async () => {
    const lock = join(dir, 'auth.json.lock');
    writeFileSync(lock, `2147483646@${hostname()}@${Date.now()}@x`);
    expect(await withFileLock(lock, async () => 'ran', { timeoutMs: 2000 })).toBe('ran');
    expect(existsSync(lock)).toBe(false);
  });

  it('breaks a lock older than the stale age', async () => {
    const lock = join(dir, 'auth.json.lock');
    writeFileSync(lock, `${process.pid}@another-host@0@x`);
    const old = new Date(Date.now() - 10 * 60_000);
    utimesSync(lock, old, old);
    expect(await withFileLock(lock, async () => 'ran', { timeoutMs: 2000 })).toBe('ran');
  });

  it('waits for a live lock and then says who holds it', async () => {
    const lock = join(dir, 'auth.json.lock');
    writeFileSync(lock, `${process.pid}@${hostname()}@${Date.now()}@x`);
    const attempt = withFileLock(lock, async () => 'ran', { timeoutMs: 300, pollMs: 20 });
    await expect(attempt).rejects.toThrow(CliError);
    await expect(attempt).rejects.toThrow(/timed out waiting for the lock .*auth\.json\.lock/);
    expect(readFileSync(lock, 'utf8')).toContain(`${process.pid}@`);
  });

  it('releases the lock when the work fails', async () => {
    const lock = join(dir, 'auth.json.lock');
    await expect(withFileLock(lock, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(existsSync(lock)).toBe(false);
    expect(await withFileLock(lock, async () => 'again')).toBe('again');
  });
});
