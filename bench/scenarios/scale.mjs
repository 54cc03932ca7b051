/**
 * Flat costs with size (issue 17): the same four requests, timed one at a time through the real
 * HTTP API of a real trellis-server, on a database of 1,000 jobs and on one of 100,000 jobs over
 * 10,000 vines with 1,000,000 log chunks (seeded in bulk with SQL: bench/lib/bulkSeed.mjs). Both
 * databases hold the same backlog (the same number of queued jobs), so only history grows.
 *
 * The figure is the median latency at 100,000 jobs; its baseline the median of the same request
 * at 1,000 jobs, measured in the same run: the aim is a ratio of at most 1.5.
 */
import { preparedDatabase } from '../lib/databases.mjs';
import { rawKnex, seedInBulk } from '../lib/bulkSeed.mjs';
import { percentile } from '../lib/load.mjs';
import { loadClient, workerHeaders } from '../lib/loadClient.mjs';
import { startControlPlaneProcess } from '../lib/processes.mjs';
import { aims, figure } from '../lib/report.mjs';
import { createOwner, registerAgents, withUseCases } from '../lib/setup.mjs';

const MAIN_TF = 'variable "n" {\n  default = 1\n}\noutput "n" {\n  value = var.n\n}\n';
const FLAT = 1.5;
/** The two databases, by the keys of `sizes()`: 1,000 and 100,000 jobs. */
const SIZES = ['small', 'large'];

/** Jobs per vine and log chunks per finished job, at both sizes. */
const JOBS_PER_VINE = 10;
const CHUNKS_PER_JOB = 10;

function sizes(quick) {
  return quick
    ? { small: 100, large: 1_000, queued: 8, warmup: 2, count: 5, claims: 5 }
    : { small: 1_000, large: 100_000, queued: 100, warmup: 20, count: 200, claims: 80 };
}

/** The requests measured, in order; `mutates`: each one takes a queued job. */
const REQUESTS = [
  { key: 'claim', label: 'claim (POST /api/jobs/claim)', mutates: true },
  { key: 'job_list', label: 'job list page (GET /api/jobs, 50)' },
  { key: 'log_page', label: 'log page (GET /api/cli/jobs/{id}/logs, 100)' },
  { key: 'vine_page', label: 'vine page (GET /api/cli/configurations/{name})' },
];

/** Request number `i` of `key`: method, path and headers (walking different rows). */
function requestOf(key, prepared, i) {
  const user = { Authorization: `Bearer ${prepared.accessToken}` };
  const pick = (list) => list[i % list.length];
  switch (key) {
    case 'claim':
      return ['POST', '/api/jobs/claim', { headers: workerHeaders(prepared.agent) }];
    case 'job_list':
      return ['GET', '/api/jobs?limit=50', { headers: user }];
    case 'log_page':
      return ['GET', `/api/cli/jobs/${pick(prepared.loggedJobIds)}/logs?limit=100`, { headers: user }];
    case 'vine_page':
      return ['GET', `/api/cli/configurations/${encodeURIComponent(pick(prepared.vineNames))}`, { headers: user }];
    default:
      throw new Error(`unknown request ${key}`);
  }
}

export const scale = {
  name: 'scale',
  /** Minutes of seeding on Postgres: only with `--scale` (or `--only scale`). */
  byDefault: false,
  baselines: {
    'same request at 1,000 jobs (--quick: 100)':
      'The same request, one at a time from the same node:http keep-alive client, against a trellis-server on a database of 1,000 jobs over 100 vines with 10,000 log chunks and the same backlog of queued jobs, measured in the same run (median latency; the 100,000-job database has 10,000 vines and 1,000,000 log chunks).',
  },

  async run(ctx) {
    const plan = sizes(ctx.quick);
    for (const dialect of ctx.dialects) {
      const databases = {};
      let medians;
      try {
        for (const size of SIZES) {
          const begin = performance.now();
          const jobs = plan[size];
          databases[size] = await preparedDatabase(dialect, (url) => prepare(url, dialect, jobs, plan));
          ctx.log(`  ${dialect}: ${jobs.toLocaleString('en-US')} jobs seeded in ${seconds(begin)} s`);
        }
        medians = await databases.small.withClone((smallUrl) =>
          databases.large.withClone((largeUrl) =>
            withServers({ small: smallUrl, large: largeUrl }, (urls) =>
              measure(urls, { small: databases.small.prepared, large: databases.large.prepared }, plan),
            ),
          ),
        );
      } finally {
        for (const database of Object.values(databases)) await database.drop();
      }
      for (const { key, label } of REQUESTS) {
        const large = medians.large[key];
        const small = medians.small[key];
        ctx.log(
          `  ${dialect} ${key}: ${small.toFixed(2)} ms at ${plan.small} jobs, ${large.toFixed(2)} ms at ${plan.large}`,
        );
        ctx.record(
          figure({
            scenario: 'scale',
            dialect,
            label: `scale ${dialect}: ${label}`,
            metric: `median latency at ${plan.large.toLocaleString('en-US')} jobs`,
            unit: 'ms',
            value: large,
            baseline: {
              name: `same request at ${plan.small.toLocaleString('en-US')} jobs`,
              value: small,
              unit: 'ms',
            },
            better: 'lower',
            aim: aims.ratioAtMost(FLAT, `≤ ${FLAT}× the time at ${plan.small.toLocaleString('en-US')} jobs`),
            details: { jobs_small: plan.small, jobs_large: plan.large },
          }),
        );
      }
    }
  },
};

/** The owner, its agent and the template vine and job through the use cases, the rest in bulk. */
async function prepare(url, dialect, jobs, plan) {
  const made = await withUseCases(url, async (useCases) => {
    const owner = await createOwner(useCases);
    const [agent] = await registerAgents(useCases, owner, 1);
    const vineyard = await useCases.vineyards.create(owner.actor, { name: 'scale' });
    const vine = await useCases.vines.create(owner.actor, {
      name: 'scale-template',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
      variables: {},
    });
    const job = await useCases.jobs.create(owner.actor, { job_type: 'PLAN', configuration_id: vine.id });
    return { owner, agent, templateVineId: vine.id, templateJobId: job.id };
  });
  const knex = rawKnex(url);
  try {
    const vines = jobs / JOBS_PER_VINE;
    await seedInBulk(knex, dialect, {
      ownerId: made.owner.actor.userId,
      templateVineId: made.templateVineId,
      templateJobId: made.templateJobId,
      vines,
      jobsPerVine: JOBS_PER_VINE,
      queued: plan.queued,
      chunksPerJob: CHUNKS_PER_JOB,
      since: '2026-01-01T00:00:00.000Z',
    });
    // Rows spread over the whole table, so the large database is not read only where it is warm.
    const spread = Math.max(1, Math.floor(vines / 50));
    const vineRows = await knex('vines').where('name', 'like', 'scale-vine-%').whereRaw(`seq % ${spread} = 0`);
    const jobRows = await knex('jobs')
      .where('status', '<>', 'QUEUED')
      .whereRaw(`seq % ${spread * JOBS_PER_VINE} = 5`)
      .select('id');
    if (vineRows.length === 0 || jobRows.length === 0)
      throw new Error('the seeded database has no vine or job to read');
    return {
      accessToken: made.owner.accessToken,
      agent: made.agent,
      vineNames: vineRows.map((row) => row.name),
      loggedJobIds: jobRows.map((row) => row.id),
    };
  } finally {
    await knex.destroy();
  }
}

/** A trellis-server on each database, both running while `work(urls)` does. */
async function withServers(databaseUrls, work) {
  const servers = {};
  try {
    for (const size of SIZES) servers[size] = await startControlPlaneProcess(databaseUrls[size]);
    return await work(Object.fromEntries(SIZES.map((size) => [size, servers[size].url])));
  } finally {
    for (const server of Object.values(servers)) await server.stop();
  }
}

/**
 * Median milliseconds of each request on each size, sent one at a time after a warm-up. The two
 * servers take turns request by request (each going first every other time), so a busy moment of
 * the machine weighs on both alike.
 */
async function measure(urls, prepared, plan) {
  const clients = Object.fromEntries(SIZES.map((size) => [size, loadClient(urls[size], { sockets: 1 })]));
  try {
    const medians = { small: {}, large: {} };
    for (const { key, mutates } of REQUESTS) {
      const count = mutates ? plan.claims : plan.count;
      const warmup = mutates ? Math.min(plan.warmup, 3) : plan.warmup;
      const timings = { small: [], large: [] };
      for (let i = 0; i < warmup + count; i += 1) {
        for (const size of i % 2 === 0 ? SIZES : [...SIZES].reverse()) {
          const [method, path, options] = requestOf(key, prepared[size], i);
          const begin = performance.now();
          await clients[size].expect(200, method, path, options);
          if (i >= warmup) timings[size].push(performance.now() - begin);
        }
      }
      for (const size of SIZES) medians[size][key] = percentile(timings[size], 50);
    }
    return medians;
  } finally {
    for (const client of Object.values(clients)) client.close();
  }
}

function seconds(begin) {
  return ((performance.now() - begin) / 1000).toFixed(1);
}
