import { afterAll, beforeAll, describe, it } from 'vitest';
import { isCi, type PostgresAvailability, type TestDialect } from './databases.js';
import { acquirePostgresSlot } from './postgresSlots.js';

/**
 * `describe` for suites that need Postgres: they run when it is reachable. When it is not, in CI
 * a failing test says Postgres is required, and elsewhere the suite is skipped with a warning on
 * stderr naming what was skipped. Get `postgres` with `await checkTestPostgres()` at the top of
 * the test file.
 *
 * A running suite holds one of the machine's Postgres slots (postgresSlots.ts) from before its
 * first hook to after its last, so few suites hold connections at once.
 */
export function describeWithPostgres(title: string, postgres: PostgresAvailability, body: () => void): void {
  if (postgres.available) {
    describe(title, () => {
      let release: (() => Promise<void>) | undefined;
      // Registered first: runs before the body's beforeAll hooks and (hooks run as a stack)
      // after its afterAll hooks, which close the connections.
      beforeAll(async () => {
        release = await acquirePostgresSlot();
      }, SLOT_WAIT_MS);
      afterAll(async () => {
        await release?.();
      });
      body();
    });
    return;
  }
  const where = redactPassword(postgres.adminUrl);
  if (isCi()) {
    describe(title, () => {
      it('needs Postgres, which CI must provide', () => {
        throw new Error(
          `Postgres is required in CI (CI=true) but ${where} cannot be reached: ${postgres.reason}. ` +
            'Start it, or point TRELLIS_TEST_POSTGRES_URL at one.',
        );
      });
    });
    return;
  }
  process.stderr.write(
    `\n${'!'.repeat(78)}\n!! SKIPPED "${title}": Postgres is not reachable at ${where}\n` +
      `!! (${postgres.reason}).\n!! Start Postgres or set TRELLIS_TEST_POSTGRES_URL to run it; with CI=true this fails.\n` +
      `${'!'.repeat(78)}\n\n`,
  );
  describe.skip(title, body);
}

/** Runs the same suite on SQLite and on Postgres (DESIGN §8), titled by the dialect. */
export function describeOnEachDialect(
  title: string,
  postgres: PostgresAvailability,
  body: (dialect: TestDialect) => void,
): void {
  describe(`${title} on sqlite`, () => body('sqlite'));
  describeWithPostgres(`${title} on postgres`, postgres, () => body('postgres'));
}

/** Waiting for a slot may take as long as other suites run. */
const SLOT_WAIT_MS = 60 * 60_000;

function redactPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable URL)';
  }
}
