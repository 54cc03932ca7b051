import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const packagesDir = fileURLToPath(new URL('./packages/', import.meta.url));

/**
 * Tests import `@trellis/*` from source, so a test run never sees stale `dist/` output; a subpath
 * export (`@trellis/testkit/controlPlane`) maps to the source file of that name.
 */
const alias = readdirSync(packagesDir).flatMap((name) => [
  { find: new RegExp(`^@trellis/${name}/([\\w/-]+)$`), replacement: `${packagesDir}${name}/src/$1.ts` },
  { find: new RegExp(`^@trellis/${name}$`), replacement: `${packagesDir}${name}/src/index.ts` },
]);

/** Every test file of the repository; each belongs to exactly one project below. */
export const ALL_TESTS = ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'examples/*/test/**/*.test.ts'];

/** `browser`: pages driven in Chromium (playwright-core) against a real server. */
export const BROWSER_TESTS = ['**/*.browser.test.ts'];

/** `e2e`: the built `trellis` and `trellis-agent` binaries against a real server and real peers. */
export const E2E_TESTS = [
  'packages/agent/test/e2e/**/*.test.ts',
  'packages/cli/test/{commands,follow,login,offline,orgs,pty,redirects,tokens}.test.ts',
];

/**
 * `faults`: issue 30's fault scenarios (docs/reliability.md): real servers, agents, OpenTofu, a
 * dedicated Postgres and Toxiproxy between them, each scenario followed by the invariant checker.
 */
export const FAULT_TESTS = ['packages/*/test/faults/**/*.test.ts'];

/**
 * `unit`: core, testkit's fakes and pure package tests: no control plane, no database, no peer
 * binary (at most a loopback stub or `nock`). Runs in seconds: `npm test -- --project unit`.
 */
export const UNIT_TESTS = [
  'packages/core/test/**/*.test.ts',
  'packages/agent/test/unit/**/*.test.ts',
  'packages/client/test/**/*.test.ts',
  'packages/contract/test/**/*.test.ts',
  'packages/http/test/**/*.test.ts',
  'packages/providers/test/**/*.test.ts',
  'packages/artifacts-fs/test/**/*.test.ts',
  'packages/artifacts-s3/test/{partBuffers,s3Errors}.test.ts',
  'packages/artifacts-gcs/test/gcsErrors.test.ts',
  'packages/testkit/test/{signIn,invariants}.test.ts',
  'packages/cli/test/{fileLock,loginSession,output}.test.ts',
  'packages/web/test/{html,session}.test.ts',
  'packages/server/test/{artifactLoaders,providerConfig,settings,streamConfig}.test.ts',
  'test/{api-docs,config-docs,dependency-rules,test-projects}.test.ts',
];

/** `integration`: everything else, i.e. tests that start a control plane, a database or a peer. */
const INTEGRATION_EXCLUDE = [...UNIT_TESTS, ...E2E_TESTS, ...FAULT_TESTS, ...BROWSER_TESTS];

/**
 * Generous limits: CI runs on a busy machine (load 15+ on 2 cores), where a CLI test that spawns
 * a few binaries can take a minute. A limit only bounds a hang; no test asserts a duration.
 */
const shared = {
  pool: 'forks' as const,
  // Most test files wait on child processes (servers, agents, tofu), not on this process's CPU:
  // three at a time on two cores finish sooner than vitest's default of cores - 1 (one, here).
  // TRELLIS_TEST_WORKERS sets another count (docs/operations.md).
  maxWorkers: Number(process.env.TRELLIS_TEST_WORKERS) || 3,
  testTimeout: 120_000,
  hookTimeout: 180_000,
};

function project(name: string, include: string[], exclude: string[] = []) {
  return {
    resolve: { alias },
    test: { name, include, exclude: ['**/node_modules/**', '**/dist/**', ...exclude], ...shared },
  };
}

export default defineConfig({
  resolve: { alias },
  test: {
    // `npm test` runs every project; `npm test -- --project unit` (or integration, e2e, browser, faults)
    // runs one. test/test-projects.test.ts checks that each test file is in exactly one.
    projects: [
      project('unit', UNIT_TESTS, BROWSER_TESTS),
      project('integration', ALL_TESTS, INTEGRATION_EXCLUDE),
      project('e2e', E2E_TESTS, BROWSER_TESTS),
      project('browser', BROWSER_TESTS),
      project('faults', FAULT_TESTS, BROWSER_TESTS),
    ],
    ...shared,
    // Runs once per run, whatever the projects (it belongs to the root, not to a project): names
    // the run and drops its Postgres test databases at the end (and stale ones of crashed runs at
    // the start). Postgres suites take turns through a machine-wide budget of slots
    // (TRELLIS_TEST_POSTGRES_SUITES) and open small pools (TRELLIS_TEST_DB_POOL_MAX): see
    // docs/operations.md, "Running the tests on a shared Postgres".
    globalSetup: ['./packages/testkit/src/globalSetup.ts'],
    reporters: ['default'],
  },
});
