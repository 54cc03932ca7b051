/**
 * Issue 24, one scheduler: the control plane's background work is tasks of core's
 * `TaskScheduler` (docs/architecture.md, Background work). No package of the control plane starts
 * a `setInterval` of its own; only the scheduler's real ticker does. The agent's and the CLI's
 * timers are theirs, not the control plane's.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const CONTROL_PLANE = [
  'core',
  'http',
  'web',
  'server',
  'store-sql',
  'providers',
  'contract',
  'artifacts-fs',
  'artifacts-s3',
  'artifacts-gcs',
];
const SCHEDULER_TICKER = 'packages/core/src/scheduler/IntervalTicker.ts';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('background work of the control plane', () => {
  it('starts no interval outside the scheduler', () => {
    const offending = CONTROL_PLANE.flatMap((name) => sources(join(root, 'packages', name, 'src')))
      .map((path) => relative(root, path))
      .filter((path) => path !== SCHEDULER_TICKER)
      .filter((path) => /\bsetInterval\s*\(/.test(readFileSync(join(root, path), 'utf8')));
    expect(offending).toEqual([]);
  });
});
