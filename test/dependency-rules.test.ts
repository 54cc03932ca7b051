/**
 * DESIGN §1's dependency rule, read from every package.json and every import in `src/`:
 * core depends on nothing; adapters and http/web on core only; cli and agent never on the
 * server side. A broken rule fails this test with the package and the offending dependency.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

interface PackageInfo {
  dir: string;
  manifest: Manifest;
  /** Bare module specifiers imported by src/**. */
  imports: Set<string>;
}

/** Which `@trellis/*` packages each package may depend on; `*` means any. */
const ALLOWED: Record<string, readonly string[] | '*'> = {
  '@trellis/core': [],
  '@trellis/store-sql': ['@trellis/core'],
  '@trellis/artifacts-fs': ['@trellis/core'],
  '@trellis/artifacts-s3': ['@trellis/core'],
  '@trellis/artifacts-gcs': ['@trellis/core'],
  '@trellis/providers': ['@trellis/core'],
  '@trellis/http': ['@trellis/core'],
  '@trellis/web': ['@trellis/core'],
  '@trellis/client': ['@trellis/core'],
  '@trellis/cli': ['@trellis/core', '@trellis/client'],
  '@trellis/agent': ['@trellis/core', '@trellis/client'],
  '@trellis/server': '*',
  '@trellis/testkit': '*',
};

const BUILTINS = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

function dependencyViolations(packages: PackageInfo[]): string[] {
  const violations: string[] = [];
  for (const { manifest, imports } of packages) {
    const name = manifest.name;
    const allowed = ALLOWED[name];
    if (allowed === undefined) {
      violations.push(`${name}: not listed in the dependency rule; add it to ALLOWED`);
      continue;
    }
    const runtime = { ...manifest.dependencies, ...manifest.peerDependencies };
    if (name === '@trellis/core' && Object.keys(runtime).length > 0) {
      violations.push(`${name}: must have no runtime dependencies, has ${Object.keys(runtime).join(', ')}`);
    }
    for (const dep of Object.keys(runtime)) {
      if (dep === '@trellis/testkit') violations.push(`${name}: depends on @trellis/testkit at runtime`);
      else if (dep.startsWith('@trellis/') && allowed !== '*' && !allowed.includes(dep)) {
        violations.push(`${name}: may not depend on ${dep}`);
      }
    }
    for (const specifier of imports) {
      if (BUILTINS.has(specifier) || BUILTINS.has(packageOf(specifier))) continue;
      const dep = packageOf(specifier);
      if (name === '@trellis/core') {
        violations.push(`${name}: imports ${specifier}; core may import only the Node standard library`);
      } else if (dep.startsWith('@trellis/') && allowed !== '*' && !allowed.includes(dep)) {
        violations.push(`${name}: imports ${specifier}, which it may not depend on`);
      } else if (!(dep in runtime)) {
        violations.push(`${name}: imports ${specifier} without declaring ${dep} in dependencies`);
      }
    }
  }
  return violations;
}

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm;

function sourceImports(dir: string): Set<string> {
  const found = new Set<string>();
  const walk = (path: string) => {
    for (const entry of readdirSync(path)) {
      const full = join(path, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry) && !entry.endsWith('.d.ts')) {
        for (const match of readFileSync(full, 'utf8').matchAll(IMPORT)) {
          const specifier = match[1] ?? match[2] ?? match[3];
          if (specifier && !specifier.startsWith('.')) found.add(specifier);
        }
      }
    }
  };
  walk(join(dir, 'src'));
  return found;
}

function readPackages(): PackageInfo[] {
  const root = fileURLToPath(new URL('../packages/', import.meta.url));
  return readdirSync(root)
    .filter((name) => statSync(join(root, name, 'package.json'), { throwIfNoEntry: false }))
    .map((name) => {
      const dir = join(root, name);
      return {
        dir,
        manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest,
        imports: sourceImports(dir),
      };
    });
}

describe('dependency rule (DESIGN §1)', () => {
  it('holds for every package of the repository', () => {
    const packages = readPackages();
    expect(packages.map((p) => p.manifest.name)).toContain('@trellis/core');
    expect(dependencyViolations(packages)).toEqual([]);
  });

  it('catches core gaining a runtime dependency', () => {
    const core: PackageInfo = {
      dir: '',
      manifest: { name: '@trellis/core', dependencies: { 'left-pad': '1.0.0' } },
      imports: new Set(['left-pad', 'node:crypto']),
    };
    expect(dependencyViolations([core])).toEqual([
      '@trellis/core: must have no runtime dependencies, has left-pad',
      '@trellis/core: imports left-pad; core may import only the Node standard library',
    ]);
  });

  it('catches the cli importing store-sql, declared or not', () => {
    const declared: PackageInfo = {
      dir: '',
      manifest: { name: '@trellis/cli', dependencies: { '@trellis/store-sql': '0.1.0' } },
      imports: new Set(['@trellis/store-sql']),
    };
    const undeclared: PackageInfo = {
      dir: '',
      manifest: { name: '@trellis/cli', dependencies: { '@trellis/client': '0.1.0' } },
      imports: new Set(['@trellis/store-sql/dist/index.js']),
    };
    expect(dependencyViolations([declared])).toContain('@trellis/cli: may not depend on @trellis/store-sql');
    expect(dependencyViolations([undeclared])).toContain(
      '@trellis/cli: imports @trellis/store-sql/dist/index.js, which it may not depend on',
    );
  });

  it('catches http depending on a concrete adapter and a runtime dependency on testkit', () => {
    const http: PackageInfo = {
      dir: '',
      manifest: { name: '@trellis/http', dependencies: { '@trellis/store-sql': '0.1.0', '@trellis/testkit': '0.1.0' } },
      imports: new Set(),
    };
    expect(dependencyViolations([http])).toEqual([
      '@trellis/http: may not depend on @trellis/store-sql',
      '@trellis/http: depends on @trellis/testkit at runtime',
    ]);
  });
});
