import { checkTestPostgres, describeWithPostgres, type TestDialect } from '@trellis/testkit';
import { describe } from 'vitest';

const postgres = await checkTestPostgres();

/** Runs the same suite on SQLite and on Postgres (DESIGN §8). */
export function describeEachDialect(title: string, body: (dialect: TestDialect) => void): void {
  describe(`${title} on sqlite`, () => body('sqlite'));
  describeWithPostgres(`${title} on postgres`, postgres, () => body('postgres'));
}

/** Only on Postgres (replicas, LISTEN/NOTIFY). */
export function describePostgres(title: string, body: () => void): void {
  describeWithPostgres(title, postgres, body);
}
