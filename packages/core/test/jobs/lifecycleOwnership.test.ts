/**
 * Issue 24, done when: the job lifecycle has one owner. A job's status moves only through the
 * state machine (`domain/`) and the lifecycle (`jobs/`), and only the lifecycle creates or
 * updates job rows, so every queue and every end runs the same hooks.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SOURCES = fileURLToPath(new URL('../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The files of core's sources (relative paths) in which `pattern` occurs. */
function filesWith(pattern: RegExp): string[] {
  return sourceFiles(SOURCES)
    .filter((file) => pattern.test(readFileSync(file, 'utf8')))
    .map((file) => relative(SOURCES, file).split('\\').join('/'))
    .sort();
}

describe('the job lifecycle has one owner', () => {
  it('transitionJob( appears only in domain/ and jobs/', () => {
    const files = filesWith(/transitionJob\(/);
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((file) => !file.startsWith('domain/') && !file.startsWith('jobs/'))).toEqual([]);
  });

  it('only jobs/ creates or updates a job row', () => {
    expect(filesWith(/\bjobs\.(create|update)\(/)).toEqual(['jobs/JobLifecycle.ts']);
  });
});
