import { checkTestPostgres, describeOnEachDialect, describeWithPostgres, type TestDialect } from '@trellis/testkit';

const postgres = await checkTestPostgres();

/** Runs the same suite on SQLite and on Postgres (DESIGN §8). */
export function describeEachDialect(title: string, body: (dialect: TestDialect) => void): void {
  describeOnEachDialect(title, postgres, body);
}

/** Only on Postgres (replicas, LISTEN/NOTIFY). */
export function describePostgres(title: string, body: () => void): void {
  describeWithPostgres(title, postgres, body);
}
