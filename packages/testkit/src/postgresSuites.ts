import { describe, it } from 'vitest';
import { isCi, type PostgresAvailability } from './databases.js';

/**
 * `describe` for suites that need Postgres: they run when it is reachable. When it is not, in CI
 * a failing test says Postgres is required, and elsewhere the suite is skipped with a warning on
 * stderr naming what was skipped. Get `postgres` with `await checkTestPostgres()` at the top of
 * the test file.
 */
export function describeWithPostgres(title: string, postgres: PostgresAvailability, body: () => void): void {
  if (postgres.available) {
    describe(title, body);
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

function redactPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable URL)';
  }
}
