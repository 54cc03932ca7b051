/**
 * DESIGN §1's dependency rule, read from every package.json and every import in `src/`:
 * core depends on nothing; adapters and web on core only; the API contract on core (and zod);
 * http and client on core and the contract; cli and agent never on the server side (they use the
 * contract through client). A broken rule fails this test with the package and the offending dependency.
 *
 * Test files (`test/`, support files included) are read too: whatever they import — an npm
 * package, a `@trellis/*` package, or another package's files by a relative path — must be
 * declared in the package's devDependencies (or dependencies), so a package's tests say what
 * they need. Only `vitest`, the repository's test runner, is taken from the root.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { builtinModules } from 'node:module';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
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
  /** Bare module specifiers imported by test/**, and `@trellis/<dir>` for a relative import into packages/<dir>. */
  testImports?: Set<string>;
}

/** Test-time imports no package declares: the test runner, installed and configured at the root. */
const ROOT_TEST_TOOLS = new Set(['vitest']);

/** Which `@trellis/*` packages each package may depend on; `*` means any. */
const ALLOWED: Record<string, readonly string[] | '*'> = {
  '@trellis/core': [],
  '@trellis/store-sql': ['@trellis/core'],
  '@trellis/artifacts-fs': ['@trellis/core'],
  '@trellis/artifacts-s3': ['@trellis/core'],
  '@trellis/artifacts-gcs': ['@trellis/core'],
  '@trellis/providers': ['@trellis/core'],
  '@trellis/contract': ['@trellis/core'],
  '@trellis/http': ['@trellis/core', '@trellis/contract'],
  '@trellis/web': ['@trellis/core'],
  '@trellis/client': ['@trellis/core', '@trellis/contract'],
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
  for (const { manifest, imports, testImports } of packages) {
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
    const declared = { ...runtime, ...manifest.devDependencies };
    for (const specifier of testImports ?? []) {
      if (BUILTINS.has(specifier) || BUILTINS.has(packageOf(specifier))) continue;
      const dep = packageOf(specifier);
      if (dep === name || ROOT_TEST_TOOLS.has(dep) || dep in declared) continue;
      violations.push(`${name}: tests import ${specifier} without declaring ${dep} in devDependencies`);
    }
  }
  return violations;
}

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm;

/**
 * The bare specifiers imported under `dir/sub`; with `relativeAcrossPackages`, a relative import
 * that leaves the package for `packages/<other>/` counts as importing `@trellis/<other>`.
 */
function importsUnder(dir: string, sub: string, relativeAcrossPackages = false): Set<string> {
  const found = new Set<string>();
  const packagesRoot = dirname(dir);
  const walk = (path: string) => {
    for (const entry of readdirSync(path)) {
      const full = join(path, entry);
      if (statSync(full).isDirectory()) {
        if (entry !== 'node_modules') walk(full);
      } else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry) && !entry.endsWith('.d.ts')) {
        for (const match of readFileSync(full, 'utf8').matchAll(IMPORT)) {
          const specifier = match[1] ?? match[2] ?? match[3];
          if (!specifier) continue;
          if (!specifier.startsWith('.')) found.add(specifier);
          else if (relativeAcrossPackages) {
            const target = relative(packagesRoot, resolve(dirname(full), specifier)).split(sep);
            if (target[0] && target[0] !== '..' && target[0] !== basename(dir)) found.add(`@trellis/${target[0]}`);
          }
        }
      }
    }
  };
  if (statSync(join(dir, sub), { throwIfNoEntry: false })?.isDirectory()) walk(join(dir, sub));
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
        imports: importsUnder(dir, 'src'),
        testImports: importsUnder(dir, 'test', true),
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

  it('catches the contract depending on http, and the cli importing the contract directly', () => {
    const contract: PackageInfo = {
      dir: '',
      manifest: { name: '@trellis/contract', dependencies: { '@trellis/core': '0.1.0', '@trellis/http': '0.1.0' } },
      imports: new Set(['@trellis/core', 'zod']),
    };
    const cli: PackageInfo = {
      dir: '',
      manifest: { name: '@trellis/cli', dependencies: { '@trellis/client': '0.1.0' } },
      imports: new Set(['@trellis/contract']),
    };
    expect(dependencyViolations([contract])).toEqual([
      '@trellis/contract: may not depend on @trellis/http',
      '@trellis/contract: imports zod without declaring zod in dependencies',
    ]);
    expect(dependencyViolations([cli])).toEqual([
      '@trellis/cli: imports @trellis/contract, which it may not depend on',
    ]);
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

  it('catches a test importing a package, or another package by path, without declaring it', () => {
    const web: PackageInfo = {
      dir: '',
      manifest: {
        name: '@trellis/web',
        dependencies: { '@trellis/core': '0.1.0' },
        devDependencies: { 'playwright-core': '^1.0.0' },
      },
      imports: new Set(['@trellis/core']),
      testImports: new Set([
        'vitest',
        'node:http',
        '@trellis/web',
        '@trellis/core',
        'playwright-core',
        '@trellis/server',
        'pg/lib/client',
      ]),
    };
    expect(dependencyViolations([web])).toEqual([
      '@trellis/web: tests import @trellis/server without declaring @trellis/server in devDependencies',
      '@trellis/web: tests import pg/lib/client without declaring pg in devDependencies',
    ]);
    const declared: PackageInfo = {
      ...web,
      manifest: {
        ...web.manifest,
        devDependencies: { 'playwright-core': '^1.0.0', '@trellis/server': '0.1.0', pg: '^8' },
      },
    };
    expect(dependencyViolations([declared])).toEqual([]);
  });

  it('reads relative imports into another package as a dependency on it', () => {
    const packages = mkdtempSync(join(tmpdir(), 'trellis-dependency-rules-'));
    try {
      mkdirSync(join(packages, 'agent', 'test', 'support'), { recursive: true });
      writeFileSync(
        join(packages, 'agent', 'test', 'support', 'e2e.ts'),
        "import { startServerProcess } from '../../../server/test/support/serverProcess.js';\n" +
          "import { fixture } from '../fixtures.js';\n",
      );
      expect([...importsUnder(join(packages, 'agent'), 'test', true)]).toEqual(['@trellis/server']);
    } finally {
      rmSync(packages, { recursive: true, force: true });
    }
  });
});

/**
 * Issue 31 (memory at idle): what a process needs only when a feature is on is loaded by the code
 * that uses it (`import()`), not at start; `import type` is erased and fine. The agent takes the
 * core's few run-time values from `@trellis/core/agent`, not the package root (its use cases).
 */
const LOADED_ON_FIRST_USE: Record<string, readonly string[]> = {
  '*': [
    '@opentelemetry/exporter-trace-otlp-http',
    '@opentelemetry/resources',
    '@opentelemetry/sdk-trace-base',
    '@opentelemetry/sdk-trace-node',
    '@aws-sdk/client-sts',
    'openpgp',
    'openid-client',
  ],
  '@trellis/agent': ['@trellis/core'],
};

const STATIC_IMPORT =
  /^\s*(?:import|export)\s+(?!type\s)[^'"]*?from\s*['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;

/** `file: specifier` for each static, value-level import under `dir/src` of a specifier in `lazy`. */
function eagerImports(dir: string, lazy: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path)) {
      const full = join(path, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.(ts|tsx|mts)$/.test(entry) && !entry.endsWith('.d.ts')) {
        for (const match of readFileSync(full, 'utf8').matchAll(STATIC_IMPORT)) {
          const specifier = match[1] ?? match[2];
          if (specifier && lazy.includes(specifier)) found.push(`${relative(dirname(dir), full)}: ${specifier}`);
        }
      }
    }
  };
  if (statSync(join(dir, 'src'), { throwIfNoEntry: false })?.isDirectory()) walk(join(dir, 'src'));
  return found;
}

describe('loaded on first use (issue 31)', () => {
  it('no package imports the OpenTelemetry SDK, the STS client, openpgp.js or openid-client at start; the agent not the core root', () => {
    const eager = readPackages().flatMap(({ dir, manifest }) =>
      eagerImports(dir, [...(LOADED_ON_FIRST_USE['*'] ?? []), ...(LOADED_ON_FIRST_USE[manifest.name] ?? [])]),
    );
    expect(eager).toEqual([]);
  });

  it('tells a value import from a type-only one', () => {
    const packages = mkdtempSync(join(tmpdir(), 'trellis-lazy-imports-'));
    try {
      mkdirSync(join(packages, 'agent', 'src'), { recursive: true });
      writeFileSync(
        join(packages, 'agent', 'src', 'a.ts'),
        "import type { Key } from 'openpgp';\n" +
          "const load = () => import('openpgp');\n" +
          "import { type JsonObject, MAX_RESOURCE_CHANGES } from '@trellis/core';\n" +
          "import { AGENT_FEATURES } from '@trellis/core/agent';\n",
      );
      expect(eagerImports(join(packages, 'agent'), ['openpgp', '@trellis/core'])).toEqual([
        'agent/src/a.ts: @trellis/core',
      ]);
    } finally {
      rmSync(packages, { recursive: true, force: true });
    }
  });
});
