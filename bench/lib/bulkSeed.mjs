/**
 * Bulk rows for the scale scenario, written with SQL in the database itself (generate_series on
 * Postgres, a recursive CTE on SQLite), never through HTTP or one insert per row: a hundred
 * thousand jobs and a million log chunks take seconds this way.
 *
 * Every row copies one template vine and its job, made through the use cases, so the columns hold
 * what the API would store (the snapshot of the template job, whose full snapshot exists once per
 * owner and hash); only names, ids, times and statuses differ.
 */
import knexFactory from 'knex';

/** A plain knex connection to a bench database (the tables' owner on Postgres). */
export function rawKnex(url) {
  if (url.startsWith('sqlite://')) {
    return knexFactory({
      client: 'better-sqlite3',
      connection: { filename: url.slice('sqlite://'.length) },
      useNullAsDefault: true,
      pool: { min: 1, max: 1 },
    });
  }
  return knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
}

/** One SQL spelling per dialect of the few things the seed needs. */
const SQL = {
  postgres: {
    series: (count) => `SELECT n FROM generate_series(1, ${count}) AS n`,
    uuid: 'gen_random_uuid()',
    at: (base, secondsExpression) => `(${base}::timestamptz + (${secondsExpression}) * interval '1 second')`,
  },
  sqlite: {
    series: (count) =>
      `WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${count}) SELECT n FROM s`,
    // A version-4 layout from random bytes.
    uuid: `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-8' || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`,
    at: (base, secondsExpression) =>
      `strftime('%Y-%m-%dT%H:%M:%fZ', ${base}, '+' || (${secondsExpression}) || ' seconds')`,
  },
};

/**
 * `vines` vines beside the template, `jobsPerVine` jobs each (finished: SUCCESS, every fourth
 * FAILED), and on the first `queued` vines a last job still QUEUED; `chunksPerJob` log chunks for
 * every job. Times run from `since`, one second per vine and one minute per job of a vine.
 * Returns nothing: the caller reads what it needs.
 */
export async function seedInBulk(
  knex,
  dialect,
  { ownerId, templateVineId, templateJobId, vines, jobsPerVine, queued, chunksPerJob, since },
) {
  const sql = SQL[dialect];
  if (!/^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(since)) throw new Error(`not an ISO time: ${since}`);
  const base = `'${since}'`;
  await knex.raw(
    `INSERT INTO vines (id, owner_id, vineyard_id, name, project_name, cloud_identity_id, source, variables, engine,
                        status, status_message, created_at, updated_at)
     SELECT ${sql.uuid}, t.owner_id, t.vineyard_id, 'scale-vine-' || g.n, 'scale-project-' || g.n, t.cloud_identity_id,
            t.source, t.variables, t.engine, 'DEPLOYED', NULL, ${sql.at(base, 'g.n')}, ${sql.at(base, 'g.n')}
     FROM vines t CROSS JOIN (${sql.series(vines)}) AS g
     WHERE t.id = ?
     ORDER BY g.n`,
    [templateVineId],
  );
  const [first] = await knex('vines').where('name', 'scale-vine-1').select('seq');
  const lastQueuedSeq = Number(first.seq) + queued - 1;
  const isQueued = `(g.n = ${jobsPerVine} AND v.seq <= ${lastQueuedSeq})`;
  const at = sql.at(base, `(v.seq * ${jobsPerVine} + g.n) * 60`);
  await knex.raw(
    `INSERT INTO jobs (id, owner_id, job_type, status, config_snapshot, config_hash, vine_id, vineyard_id,
                       execution_metadata, created_at, claimed_at, finished_at, log_bytes)
     SELECT ${sql.uuid}, t.owner_id, t.job_type,
            CASE WHEN ${isQueued} THEN 'QUEUED' WHEN g.n % 4 = 3 THEN 'FAILED' ELSE 'SUCCESS' END,
            t.config_snapshot, t.config_hash, v.id, v.vineyard_id, t.execution_metadata, ${at},
            CASE WHEN ${isQueued} THEN NULL ELSE ${at} END,
            CASE WHEN ${isQueued} THEN NULL ELSE ${at} END,
            CASE WHEN ${isQueued} THEN 0 ELSE ? END
     FROM jobs t
     CROSS JOIN vines v
     CROSS JOIN (${sql.series(jobsPerVine)}) AS g
     WHERE t.id = ? AND v.owner_id = t.owner_id AND v.seq >= ?
     ORDER BY v.seq, g.n`,
    [chunksPerJob * 32, templateJobId, Number(first.seq)],
  );
  await knex.raw(
    `INSERT INTO log_chunks (job_id, owner_id, log_chunk, stream_type, created_at)
     SELECT j.id, j.owner_id, 'line ' || c.n || ' of the engine''s output', 'stdout', j.created_at
     FROM jobs j CROSS JOIN (${sql.series(chunksPerJob)}) AS c
     WHERE j.owner_id = ? AND j.id <> ? AND j.status <> 'QUEUED'
     ORDER BY j.seq, c.n`,
    [ownerId, templateJobId],
  );
  // What autovacuum does on its own on Postgres a little later; SQLite keeps no statistics unless
  // told, and a deployment is not told, so neither is the bench.
  if (dialect === 'postgres') await knex.raw('ANALYZE');
}
