/**
 * The Vitest projects of vitest.config.ts (`unit`, `integration`, `e2e`, `browser`, `faults`) split the
 * suite: every test file of the repository must belong to exactly one of them, so that
 * `npm test` (all projects) runs each file once and `--project X` runs a well-defined part.
 */
import { readdirSync } from 'node:fs';
import { join, matchesGlob, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import config from '../vitest.config.js';

interface Project {
  name: string;
  include: string[];
  exclude: string[];
}

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git']);

function projects(): Project[] {
  const entries = (config.test?.projects ?? []) as {
    test?: { name?: string; include?: string[]; exclude?: string[] };
  }[];
  return entries.map((entry) => ({
    name: entry.test?.name ?? '(unnamed)',
    include: entry.test?.include ?? [],
    exclude: entry.test?.exclude ?? [],
  }));
}

/** The projects whose include globs match `file` (relative, `/`-separated) and whose exclude globs do not. */
function projectsOf(file: string, all: Project[]): string[] {
  return all
    .filter((p) => p.include.some((g) => matchesGlob(file, g)) && !p.exclude.some((g) => matchesGlob(file, g)))
    .map((p) => p.name);
}

function testFiles(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) testFiles(join(dir, entry.name), found);
    } else if (entry.name.endsWith('.test.ts')) {
      found.push(relative(ROOT, join(dir, entry.name)).split('\\').join('/'));
    }
  }
  return found;
}

describe('vitest projects', () => {
  const all = projects();

  it('are unit, integration, e2e, browser and faults', () => {
    expect(all.map((p) => p.name)).toEqual(['unit', 'integration', 'e2e', 'browser', 'faults']);
  });

  it('hold every test file of the repository exactly once', () => {
    const files = ['packages', 'test', 'examples'].flatMap((dir) => testFiles(join(ROOT, dir)));
    expect(files).toContain('test/test-projects.test.ts');
    const misplaced = files
      .map((file) => ({ file, in: projectsOf(file, all) }))
      .filter((entry) => entry.in.length !== 1);
    expect(misplaced).toEqual([]);
  });

  it('put files where their name says, and a new package test in integration by default', () => {
    expect(projectsOf('packages/core/test/domain/errors.test.ts', all)).toEqual(['unit']);
    expect(projectsOf('packages/web/test/new.browser.test.ts', all)).toEqual(['browser']);
    expect(projectsOf('packages/agent/test/e2e/new.test.ts', all)).toEqual(['e2e']);
    expect(projectsOf('packages/agent/test/unit/new.browser.test.ts', all)).toEqual(['browser']);
    expect(projectsOf('packages/server/test/new.test.ts', all)).toEqual(['integration']);
    expect(projectsOf('packages/newpkg/test/new.test.ts', all)).toEqual(['integration']);
    expect(projectsOf('packages/agent/test/faults/new.test.ts', all)).toEqual(['faults']);
    expect(projectsOf('packages/testkit/test/invariants.test.ts', all)).toEqual(['unit']);
  });

  it('would catch a file in two projects or in none', () => {
    const overlapping: Project[] = [
      { name: 'a', include: ['packages/*/test/**/*.test.ts'], exclude: [] },
      { name: 'b', include: ['packages/core/test/**/*.test.ts'], exclude: [] },
    ];
    expect(projectsOf('packages/core/test/x.test.ts', overlapping)).toEqual(['a', 'b']);
    expect(projectsOf('elsewhere/x.test.ts', overlapping)).toEqual([]);
  });
});
