import { type RateLimitCount, type RateLimitStore, systemScope } from '@trellis/core';
import type { Dialect } from './dialects/Dialect.js';
import type { Row } from './rows.js';

/** Expired windows are deleted once every this many hits of this process. */
const SWEEP_EVERY_HITS = 1000;

/**
 * Rate-limit counters in the `rate_limits` table (m008), shared by every replica on the database.
 * A hit is one atomic upsert, so concurrent hits on several replicas are all counted. Times are
 * the caller's clock, in milliseconds.
 */
export class SqlRateLimitStore implements RateLimitStore {
  private hitsSinceSweep = 0;

  constructor(private readonly dialect: Dialect) {}

  async hit(key: string, at: Date, windowSeconds: number): Promise<RateLimitCount> {
    const now = at.getTime();
    const sweep = ++this.hitsSinceSweep >= SWEEP_EVERY_HITS;
    if (sweep) this.hitsSinceSweep = 0;
    const rows = await this.statement(async (raw) => {
      if (sweep) await raw('DELETE FROM rate_limits WHERE resets_at <= ?', [now]);
      return raw(
        `INSERT INTO rate_limits (limit_key, hits, resets_at) VALUES (?, 1, ?)
         ON CONFLICT (limit_key) DO UPDATE SET
           hits = CASE WHEN rate_limits.resets_at <= ? THEN 1 ELSE rate_limits.hits + 1 END,
           resets_at = CASE WHEN rate_limits.resets_at <= ? THEN excluded.resets_at ELSE rate_limits.resets_at END
         RETURNING hits, resets_at`,
        [key, now + windowSeconds * 1000, now, now],
      );
    });
    return countOf(rows[0]);
  }

  async get(key: string, at: Date): Promise<RateLimitCount | null> {
    const rows = await this.statement((raw) =>
      raw('SELECT hits, resets_at FROM rate_limits WHERE limit_key = ? AND resets_at > ?', [key, at.getTime()]),
    );
    return rows[0] ? countOf(rows[0]) : null;
  }

  async undo(key: string, at: Date): Promise<void> {
    await this.statement((raw) =>
      raw('UPDATE rate_limits SET hits = hits - 1 WHERE limit_key = ? AND resets_at > ? AND hits > 0', [
        key,
        at.getTime(),
      ]),
    );
  }

  async reset(key: string): Promise<void> {
    await this.statement((raw) => raw('DELETE FROM rate_limits WHERE limit_key = ?', [key]));
  }

  private async statement(
    run: (raw: (sql: string, bindings: (string | number)[]) => Promise<Row[]>) => Promise<Row[]>,
  ): Promise<Row[]> {
    try {
      return await this.dialect.transaction(systemScope, (session) =>
        run((sql, bindings) => session.raw(sql, bindings)),
      );
    } catch (error) {
      throw this.dialect.translate(error);
    }
  }
}

function countOf(row: Row | undefined): RateLimitCount {
  if (!row) throw new Error('the rate limit upsert returned no row');
  return { hits: Number(row.hits), resetsAt: new Date(Number(row.resets_at)) };
}
