/**
 * Log chunks ingested per second: several agents, each posting 4 KiB chunks to its own running
 * job, against the same chunks appended directly through the store's LogStore.
 */
import { ownerScope } from '@trellis/core';
import { openSqlStore } from '@trellis/store-sql';
import { preparedDatabase } from '../lib/databases.mjs';
import { measureAfterWarmup } from '../lib/load.mjs';
import { loadClient, workerHeaders } from '../lib/loadClient.mjs';
import { startControlPlaneProcess } from '../lib/processes.mjs';
import { aims, figure } from '../lib/report.mjs';
import { claimFor, createOwner, queuePlanJobs, registerAgents, withUseCases } from '../lib/setup.mjs';

const AGENTS = 4;
const CHUNK_BYTES = 4096;
/** Chunks per batched post (issue 17), and per multi-row INSERT of its baseline. */
const BATCH = 100;

/** 4 KiB of plausible engine output (ASCII, so bytes = characters). */
const CHUNK = (() => {
  const line = 'aws_instance.web[0]: Still creating... [10s elapsed] (bench log line)\n';
  return line.repeat(Math.ceil(CHUNK_BYTES / line.length)).slice(0, CHUNK_BYTES);
})();

export const logIngest = {
  name: 'logs',
  baselines: {
    'raw multi-row INSERT':
      'The same 4 KiB chunks, 100 per statement, written by one multi-row `INSERT INTO log_chunks (...) VALUES (...), ...` per batch with their seqs, straight to the database (Postgres: a pg.Pool of the server size as the connecting superuser, autocommit; SQLite: better-sqlite3 on the database file): the insert alone, without HTTP, JSON, worker authentication, the job check and lock, the owner-scoped transaction, the byte count or the event.',
    'direct LogStore.append':
      'The same 4 KiB chunks appended through the store port, `uow.run(ownerScope(owner), s => s.logs.append(...))`, on a second openSqlStore() in the bench process (same pool size as the server): the insert every log post does, without HTTP, JSON parsing, worker authentication, the job check or the event.',
  },

  async run(ctx) {
    const count = ctx.quick ? 300 : 4000;
    const warmup = ctx.quick ? 40 : 200;
    const seconds = ctx.quick ? 2 : 4;
    for (const dialect of ctx.dialects) {
      const database = await preparedDatabase(dialect, (url) =>
        withUseCases(url, async (useCases) => {
          const owner = await createOwner(useCases);
          const agents = await registerAgents(useCases, owner, AGENTS);
          await queuePlanJobs(useCases, owner, AGENTS, { prefix: 'logs' });
          // Each agent runs a job of its own: only the claiming agent may post its logs.
          for (const agent of agents) agent.jobId = (await claimFor(useCases, agent)).id;
          return { agents };
        }),
      );
      try {
        const { agents } = database.prepared;
        const plan = { count, warmup, seconds };
        const http = await database.withClone(async (url) => {
          const server = await startControlPlaneProcess(url);
          const client = loadClient(server.url, { sockets: AGENTS });
          try {
            return await measure({ ...plan, serverPid: server.pid }, async (lane) => {
              const agent = agents[lane];
              await client.expect(201, 'POST', `/api/jobs/${agent.jobId}/logs`, {
                headers: workerHeaders(agent),
                json: { log_chunk: CHUNK, stream_type: 'STDOUT' },
              });
            });
          } finally {
            client.close();
            await server.stop();
          }
        });
        const direct = await database.withClone(async (url) => {
          const store = await openSqlStore(url);
          try {
            return await measure(plan, async (lane) => {
              const { ownerId, jobId } = agents[lane];
              await store.uow.run(ownerScope(ownerId), (stores) =>
                stores.logs.append(ownerId, jobId, CHUNK, 'STDOUT', new Date().toISOString()),
              );
            });
          } finally {
            await store.close();
          }
        });
        ctx.log(
          `  ${dialect}: ${http.perSecond.toFixed(0)} chunks/s over HTTP, ${direct.perSecond.toFixed(0)} direct; ` +
            `server CPU ${http.serverCpuMsPerOperation?.toFixed(2) ?? '?'} ms per chunk`,
        );
        ctx.record(
          figure({
            scenario: 'logs',
            dialect,
            label: `log ingest ${dialect} ×${AGENTS}`,
            metric: '4 KiB chunks',
            unit: '/s',
            value: http.perSecond,
            baseline: { name: 'direct LogStore.append', value: direct.perSecond },
            better: 'higher',
            details: {
              agents: AGENTS,
              chunk_bytes: CHUNK_BYTES,
              http: { ...http, megabytesPerSecond: (http.perSecond * CHUNK_BYTES) / 1e6 },
              direct: { ...direct, megabytesPerSecond: (direct.perSecond * CHUNK_BYTES) / 1e6 },
            },
          }),
        );
        const batchPlan = { count: ctx.quick ? 20 : 300, warmup: ctx.quick ? 4 : 30, seconds };
        const batched = await database.withClone(async (url) => {
          const server = await startControlPlaneProcess(url);
          const client = loadClient(server.url, { sockets: AGENTS });
          const seqs = agents.map(() => 0);
          try {
            return await measure({ ...batchPlan, serverPid: server.pid }, async (lane) => {
              const agent = agents[lane];
              const first = seqs[lane] + 1;
              seqs[lane] += BATCH;
              const chunks = Array.from({ length: BATCH }, (_, i) => ({
                seq: first + i,
                log_chunk: CHUNK,
                stream_type: 'STDOUT',
              }));
              await client.expect(201, 'POST', `/api/jobs/${agent.jobId}/logs`, {
                headers: workerHeaders(agent),
                json: { chunks },
              });
            });
          } finally {
            client.close();
            await server.stop();
          }
        });
        const raw = await database.withClone((url) => measureRawInserts(dialect, url, agents, batchPlan));
        const batchedPerSecond = batched.perSecond * BATCH;
        const rawPerSecond = raw.perSecond * BATCH;
        ctx.log(
          `  ${dialect}: ${batchedPerSecond.toFixed(0)} chunks/s batched over HTTP (${BATCH} per post), ` +
            `${rawPerSecond.toFixed(0)} by raw multi-row INSERT`,
        );
        ctx.record(
          figure({
            scenario: 'logs',
            dialect,
            label: `batched log ingest ${dialect} ×${AGENTS}`,
            metric: `4 KiB chunks, ${BATCH} per post`,
            unit: '/s',
            value: batchedPerSecond,
            baseline: { name: 'raw multi-row INSERT', value: rawPerSecond },
            aim: aims.ratioAtLeast(0.5, '≥ 0.5× baseline'),
            better: 'higher',
            details: {
              agents: AGENTS,
              chunk_bytes: CHUNK_BYTES,
              batch: BATCH,
              http: { ...batched, megabytesPerSecond: (batchedPerSecond * CHUNK_BYTES) / 1e6 },
              raw: { ...raw, megabytesPerSecond: (rawPerSecond * CHUNK_BYTES) / 1e6 },
            },
          }),
        );
      } finally {
        await database.drop();
      }
    }
  },
};

/** Batches of `BATCH` chunks (with seqs) by one multi-row INSERT each, straight to the database. */
async function measureRawInserts(dialect, url, agents, plan) {
  const columns = '(job_id, owner_id, seq, log_chunk, stream_type, created_at)';
  const seqs = agents.map(() => 0);
  const rowsOf = (lane) => {
    const { ownerId, jobId } = agents[lane];
    const first = seqs[lane] + 1;
    seqs[lane] += BATCH;
    const at = new Date().toISOString();
    return Array.from({ length: BATCH }, (_, i) => [jobId, ownerId, first + i, CHUNK, 'STDOUT', at]);
  };
  if (dialect === 'sqlite') {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(url.slice('sqlite://'.length));
    db.pragma('busy_timeout = 5000');
    const insert = db.prepare(
      `INSERT INTO log_chunks ${columns} VALUES ${Array.from({ length: BATCH }, () => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
    );
    try {
      return await measure(plan, async (lane) => {
        insert.run(rowsOf(lane).flat());
      });
    } finally {
      db.close();
    }
  }
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {});
  const values = Array.from(
    { length: BATCH },
    (_, row) => `(${Array.from({ length: 6 }, (_, column) => `$${row * 6 + column + 1}`).join(', ')})`,
  ).join(', ');
  try {
    return await measure(plan, async (lane) => {
      await pool.query(`INSERT INTO log_chunks ${columns} VALUES ${values}`, rowsOf(lane).flat());
    });
  } finally {
    await pool.end();
  }
}

function measure({ count, warmup, seconds, serverPid }, operation) {
  return measureAfterWarmup({ concurrency: AGENTS, warmup, count, seconds, operation, serverPid });
}
