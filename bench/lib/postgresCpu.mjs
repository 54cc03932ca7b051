/**
 * CPU the Postgres server spends for one database: the user + system time (`/proc/<pid>/stat`) of
 * the backends connected to it, read every `intervalMs`. A backend there when sampling starts
 * counts from its time then, one that appears later from zero (its whole life), one that exits
 * between two reads loses at most its last interval. Shared work (WAL writer, checkpointer,
 * autovacuum) is not counted: the instance is shared with other work. Needs Postgres on this
 * machine (its backends' /proc); elsewhere `stop()` answers null.
 *
 * `pg_stat_statements` would give the statements' own time, but it needs
 * `shared_preload_libraries`, which a shared instance usually lacks (it does here): then
 * `statementsTimeMs` is null and says why.
 */
import { cpuSecondsOf } from './processes.mjs';

export async function samplePostgresCpu(adminUrl, database, intervalMs = 100) {
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  await admin.connect();
  const pidsOf = async () =>
    (await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database])).rows.map((row) => row.pid);
  const start = new Map();
  const last = new Map();
  for (const pid of await pidsOf()) {
    const cpu = cpuSecondsOf(pid);
    if (cpu === null) continue;
    start.set(pid, cpu);
    last.set(pid, cpu);
  }
  let reading = null;
  const read = async () => {
    for (const pid of await pidsOf()) {
      const cpu = cpuSecondsOf(pid);
      if (cpu === null) continue;
      if (!start.has(pid)) start.set(pid, 0);
      last.set(pid, cpu);
    }
  };
  const timer = setInterval(() => {
    reading ??= read()
      .catch(() => {})
      .finally(() => {
        reading = null;
      });
  }, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await reading;
      await read().catch(() => {});
      await admin.end().catch(() => {});
      if (start.size === 0) return { cpuSeconds: null, backends: 0 };
      let total = 0;
      for (const [pid, first] of start) total += (last.get(pid) ?? first) - first;
      return { cpuSeconds: total, backends: start.size };
    },
  };
}

/** Whether `pg_stat_statements` can be read on `url` (it is created if missing); the reason if not. */
export async function statementStats(url) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT 1 FROM pg_stat_statements LIMIT 1');
    return { available: true };
  } catch (error) {
    return { available: false, reason: String(error?.message ?? error) };
  } finally {
    await client.end().catch(() => {});
  }
}
