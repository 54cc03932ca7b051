/**
 * Heartbeats per second through the control plane (authenticated agents: worker lookup and token
 * check, then the heartbeat's own transaction) against a bare node:http server answering the same
 * JSON, driven by the same client code at the same concurrency and request count.
 */
import { preparedDatabase } from '../lib/databases.mjs';
import { measureAfterWarmup } from '../lib/load.mjs';
import { loadClient, workerHeaders } from '../lib/loadClient.mjs';
import { startBareServer, startControlPlaneProcess } from '../lib/processes.mjs';
import { aims, figure } from '../lib/report.mjs';
import { createOwner, registerAgents, withUseCases } from '../lib/setup.mjs';

const CONCURRENCY = 16;

export const heartbeats = {
  name: 'heartbeats',
  baselines: {
    'bare node:http':
      'A node:http server in its own process (bench/children/bare-server.mjs) with no framework, authentication or database, answering {"cancel_job_ids":[],"heartbeat_interval_s":30}; the same requests from the same node:http keep-alive client (bench/lib/loadClient.mjs) at the same concurrency, warm-up and request count.',
  },

  async run(ctx) {
    const count = ctx.quick ? 400 : 5000;
    const warmup = ctx.quick ? 50 : 500;
    const seconds = ctx.quick ? 2 : 4;
    for (const dialect of ctx.dialects) {
      const database = await preparedDatabase(dialect, (url) =>
        withUseCases(url, async (useCases) => {
          const owner = await createOwner(useCases);
          // One worker per client: agents heartbeat for themselves, never sixteen times for one.
          return { agents: await registerAgents(useCases, owner, CONCURRENCY) };
        }),
      );
      try {
        const { agents } = database.prepared;
        const plan = { count, warmup, seconds };
        const trellis = await database.withClone(async (url) => {
          const server = await startControlPlaneProcess(url);
          try {
            return await measureHeartbeats(server, agents, plan);
          } finally {
            await server.stop();
          }
        });
        // The baseline right after, on the same machine state.
        const bare = await startBareServer();
        let baseline;
        try {
          baseline = await measureHeartbeats(bare, agents, plan);
        } finally {
          await bare.stop();
        }
        ctx.log(
          `  ${dialect}: ${trellis.perSecond.toFixed(0)} heartbeats/s, bare node:http ${baseline.perSecond.toFixed(0)}/s; ` +
            `server CPU ${cpu(trellis)} ms per request, bare ${cpu(baseline)} ms`,
        );
        ctx.record(
          figure({
            scenario: 'heartbeats',
            dialect,
            label: `heartbeats ${dialect} ×${CONCURRENCY}`,
            metric: 'heartbeats',
            unit: '/s',
            value: trellis.perSecond,
            baseline: { name: 'bare node:http', value: baseline.perSecond },
            better: 'higher',
            aim: aims.ratioAtLeast(1 / 3, '≥ 1/3× baseline'),
            details: { concurrency: CONCURRENCY, trellis, bare: baseline },
          }),
        );
      } finally {
        await database.drop();
      }
    }
  },
};

async function measureHeartbeats(server, agents, { count, warmup, seconds }) {
  const client = loadClient(server.url, { sockets: CONCURRENCY });
  try {
    const operation = async (lane) => {
      const { body } = await client.expect(200, 'POST', '/api/workers/heartbeat', {
        headers: workerHeaders(agents[lane]),
        json: { version: 'bench' },
      });
      if (!Array.isArray(body.cancel_job_ids)) throw new Error('unexpected heartbeat answer');
    };
    return await measureAfterWarmup({
      concurrency: CONCURRENCY,
      warmup,
      count,
      seconds,
      operation,
      serverPid: server.pid,
    });
  } finally {
    client.close();
  }
}

const cpu = (result) => result.serverCpuMsPerOperation?.toFixed(2) ?? '?';
