/**
 * Core's unit tests start in seconds because they import the testkit's light entry
 * (`@trellis/testkit/memory`): the fakes, builders and conformance suites, with no database
 * driver, server, HTTP stack or browser behind them. This follows its imports through the
 * sources and fails when one reaches a package outside that light set.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PACKAGES = fileURLToPath(new URL('../../../', import.meta.url));
/**
 * What the light entry may load: core, the JWS signer's own entry (jose), the tarball checker's
 * own entry (tar, a pure-JS reader), the registry's OpenPGP checks (openpgp.js, pure JS), vitest and Node.
 */
const LIGHT = [
  '@trellis/core',
  '@trellis/http/jws',
  'jose',
  '@trellis/artifacts-fs/tarballs',
  'tar',
  '@trellis/artifacts-fs/openpgp',
  'openpgp',
  'vitest',
];

function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const found = [...source.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s+'([^']+)'/g)].map(
    (m) => m[1] as string,
  );
  // `import type` and `export type` load nothing at run time.
  const typeOnly = new Set(
    [...source.matchAll(/(?:^|\n)\s*(?:import|export)\s+type\s[^'";]*?from\s+'([^']+)'/g)].map((m) => m[1] as string),
  );
  return found.filter((specifier) => !typeOnly.has(specifier));
}

/** The source file of a `@trellis/<package>[/<entry>]` or a relative specifier. */
function sourceOf(specifier: string, from: string): string | null {
  const trellis = /^@trellis\/([\w-]+)(?:\/([\w/-]+))?$/.exec(specifier);
  if (trellis) return join(PACKAGES, trellis[1] as string, 'src', `${trellis[2] ?? 'index'}.ts`);
  if (specifier.startsWith('.')) return resolve(dirname(from), specifier.replace(/\.js$/, '.ts'));
  return null;
}

/** Every package the entry's module graph loads, by the file that loads it first. */
function packagesLoadedBy(entry: string): Map<string, string> {
  const loaded = new Map<string, string>();
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of importsOf(file)) {
      if (specifier.startsWith('node:')) continue;
      if (!specifier.startsWith('.') && !loaded.has(specifier)) loaded.set(specifier, relative(PACKAGES, file));
      // Core is pure (test/dependency-rules.test.ts); past it nothing is loaded but Node's own.
      if (specifier === '@trellis/core' || (!specifier.startsWith('.') && !specifier.startsWith('@trellis/'))) continue;
      const next = sourceOf(specifier, file);
      if (next && existsSync(next)) pending.push(next);
    }
  }
  return loaded;
}

describe('the light testkit entry', () => {
  it('loads no database driver, server, HTTP stack or browser', () => {
    const loaded = packagesLoadedBy(join(PACKAGES, 'testkit/src/memory.ts'));
    const heavy = [...loaded].filter(([name]) => !LIGHT.includes(name)).map(([name, by]) => `${name} (by ${by})`);
    expect(heavy).toEqual([]);
    expect([...loaded.keys()]).toContain('@trellis/core');
  });

  it('is what every core test imports from the testkit', () => {
    const tests = fileURLToPath(new URL('../', import.meta.url));
    const files = (function walk(dir: string): string[] {
      return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
      );
    })(tests);
    const heavy = files.filter((file) =>
      importsOf(file).some((s) => s.startsWith('@trellis/testkit') && s !== '@trellis/testkit/memory'),
    );
    expect(heavy.map((file) => relative(tests, file))).toEqual([]);
  });
});
