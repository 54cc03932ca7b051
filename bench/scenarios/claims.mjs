/**
 * Claims per second through HTTP at 1, 4 and 16 concurrent agents, against the same claim run
 * directly on the database.
 *
 * Each agent is a registered worker of its own and claims in a closed loop from a backlog of
 * queued PLAN jobs, one per vine. Claimed jobs are not marked SUCCESS: the figure is claims only,
 * with no status report mixed in. One job per vine keeps that honest: every queued job is
 * claimable at once, so no claim waits for a vine's running job to end.
 */
import { JOB_CLAIM, ownerScope } from '@trellis/core';
import { openSqlStore } from '@trellis/store-sql';
import { preparedDatabase } from '../lib/databases.mjs';
import { SERVER_POOL_SIZE } from '../lib/environment.mjs';
import { measureAfterWarmup } from '../lib/load.mjs';
import { loadClient, workerHeaders } from '../lib/loadClient.mjs';
import { startControlPlaneProcess } from '../lib/processes.mjs';
import { aims, figure } from '../lib/report.mjs';
import { createOwner, queueManyPlanJobs, registerAgents, withUseCases } from '../lib/setup.mjs';

const LEVELS = [1, 4, 16];

export const claims = {
  name: 'claims',
  baselines: {
    'direct claimNext':
      "SQLite: the store's own claim, `uow.run(ownerScope(owner), s => s.jobs.claimNext(worker, at))`, through a second openSqlStore() on the same kind of database in the bench process: the BEGIN IMMEDIATE claim (job and vine moved, answer read) every HTTP claim also runs, without HTTP, worker authentication, or the rest of the claim use case (policies, tokens, event).",
    'raw claim_next_job()':
      "Postgres: `SELECT (c.claimed_job).* FROM claim_next_job($1, …, $6) c` with core's JOB_CLAIM moves, through a pg.Pool of the server's size (10) as the connecting superuser, autocommit: the claim function alone (job and vine moved), without HTTP, worker authentication, the owner-scoped transaction (SET LOCAL ROLE, row-level security) or the reads of the claim's answer.",
  },

  async run(ctx) {
    const measured = ctx.quick ? 150 : 1000;
    const warmup = ctx.quick ? 20 : 100;
    const seconds = ctx.quick ? 2 : 3;
    for (const dialect of ctx.dialects) {
      ctx.log(`claims on ${dialect}: queueing ${measured + warmup} jobs on as many vines`);
      const database = await preparedDatabase(dialect, async (url) => {
        const { owner, agents, vineyardId } = await withUseCases(url, async (useCases) => {
          const owner = await createOwner(useCases);
          const agents = await registerAgents(useCases, owner, Math.max(...LEVELS));
          const vineyard = await useCases.vineyards.create(owner.actor, { name: 'bench-claims' });
          return { owner, agents, vineyardId: vineyard.id };
        });
        await queueManyPlanJobs(url, owner, vineyardId, measured + warmup);
        return { owner, agents };
      });
      try {
        const { agents } = database.prepared;
        for (const concurrency of LEVELS) {
          const lanes = agents.slice(0, concurrency);
          const plan = { concurrency, warmup, measured, seconds };
          const http = await database.withClone((url) => claimOverHttp(url, lanes, plan));
          const direct = await database.withClone((url) => claimDirectly(dialect, url, lanes, plan));
          // Not a baseline but a reference in the JSON: the whole claim use case without HTTP
          // and authentication splits the gap into domain work and HTTP.
          const useCase = await database.withClone((url) => claimThroughUseCase(url, lanes, plan));
          ctx.log(
            `  ${concurrency} agent(s): ${http.perSecond.toFixed(0)} claims/s over HTTP, ` +
              `${useCase.perSecond.toFixed(0)} through the use case in-process, ${direct.perSecond.toFixed(0)} direct; ` +
              `server CPU ${http.serverCpuMsPerOperation?.toFixed(2) ?? '?'} ms per HTTP claim`,
          );
          ctx.record(
            figure({
              scenario: 'claims',
              dialect,
              label: `claims ${dialect} ×${concurrency}`,
              metric: 'claims',
              unit: '/s',
              value: http.perSecond,
              baseline: {
                name: dialect === 'sqlite' ? 'direct claimNext' : 'raw claim_next_job()',
                value: direct.perSecond,
              },
              better: 'higher',
              aim: aims.ratioAtLeast(0.5, '≥ 0.5× baseline'),
              details: { concurrency, http, direct, use_case_in_process: useCase },
            }),
          );
        }
      } finally {
        await database.drop();
      }
    }
  },
};

/** Every lane claims until the count or the time is up; claimed ids must all differ. */
async function measureClaims(lanes, { concurrency, warmup, measured, seconds }, claim, serverPid) {
  const seen = new Set();
  let duplicates = 0;
  const operation = async (lane) => {
    const job = await claim(lanes[lane]);
    if (!job) return false;
    if (seen.has(job.id)) duplicates += 1;
    seen.add(job.id);
    return true;
  };
  // Warm-up claims come off the same backlog (it holds warmup + measured jobs).
  const result = await measureAfterWarmup({ concurrency, warmup, count: measured, seconds, operation, serverPid });
  return { ...result, duplicates };
}

async function claimOverHttp(url, lanes, plan) {
  const server = await startControlPlaneProcess(url);
  const client = loadClient(server.url, { sockets: lanes.length });
  try {
    // One heartbeat each first: it opens the agent's connection and marks it alive, as agents do.
    await Promise.all(
      lanes.map((agent) =>
        client.expect(200, 'POST', '/api/workers/heartbeat', {
          headers: workerHeaders(agent),
          json: { version: 'bench' },
        }),
      ),
    );
    return await measureClaims(
      lanes,
      plan,
      async (agent) => {
        const answer = await client.expect([200, 204], 'POST', '/api/jobs/claim', { headers: workerHeaders(agent) });
        return answer.status === 200 ? answer.body.job : null;
      },
      server.pid,
    );
  } finally {
    client.close();
    await server.stop();
  }
}

/** `useCases.jobs.claim` of a control plane in the bench process: what the route calls. */
function claimThroughUseCase(url, lanes, plan) {
  return withUseCases(url, (useCases) =>
    measureClaims(lanes, plan, async (agent) => {
      const claimed = await useCases.jobs.claim({ workerId: agent.workerId, ownerId: agent.ownerId });
      return claimed?.job ?? null;
    }),
  );
}

async function claimDirectly(dialect, url, lanes, plan) {
  if (dialect === 'sqlite') {
    const store = await openSqlStore(url);
    try {
      return await measureClaims(lanes, plan, async (agent) => {
        const claim = await store.uow.run(ownerScope(agent.ownerId), (stores) =>
          stores.jobs.claimNext({ id: agent.workerId, owner_id: agent.ownerId }, new Date().toISOString()),
        );
        return claim?.job ?? null;
      });
    } finally {
      await store.close();
    }
  }
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: SERVER_POOL_SIZE });
  // An idle client cut off (the database is dropped right after) must not crash the bench.
  pool.on('error', () => {});
  try {
    return await measureClaims(lanes, plan, async (agent) => {
      const { rows } = await pool.query('SELECT (c.claimed_job).* FROM claim_next_job($1, $2, $3, $4, $5, $6) c', [
        agent.workerId,
        new Date(),
        JOB_CLAIM.from,
        JOB_CLAIM.to,
        JSON.stringify(JOB_CLAIM.vine),
        JOB_CLAIM.vineKeptBy,
      ]);
      return rows[0] ?? null;
    });
  } finally {
    await pool.end();
  }
}
