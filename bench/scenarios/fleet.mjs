/**
 * The fleet (issue 29): the configurations list filtered by status, drift, policy, tag and last
 * change, with its counts (`counts=true`), timed one request at a time through the real HTTP API
 * of a real trellis-server on a database of 10,000 vines (half of them an organization's, the
 * person a member) and 100,000 jobs, seeded in bulk with SQL (bench/lib/bulkSeed.mjs), their
 * standings spread by SQL. The aim: every request under 300 ms (median). Its baseline: the plain
 * first page of the same list (no filter, no counts: what `GET /api/cli/configurations` answered
 * before the fleet) on the same server, taking turns request by request.
 */
import { preparedDatabase } from '../lib/databases.mjs';
import { rawKnex, seedInBulk } from '../lib/bulkSeed.mjs';
import { percentile } from '../lib/load.mjs';
import { loadClient } from '../lib/loadClient.mjs';
import { startControlPlaneProcess } from '../lib/processes.mjs';
import { aims, figure } from '../lib/report.mjs';
import { createOwner, withUseCases } from '../lib/setup.mjs';

const MAIN_TF = 'variable "n" {\n  default = 1\n}\noutput "n" {\n  value = var.n\n}\n';
const BOUND_MS = 300;
const JOBS_PER_VINE = 10;
const SINCE = '2026-01-01T00:00:00.000Z';

function sizes(quick) {
  return quick
    ? { vines: 100, queued: 4, warmup: 2, count: 5 }
    : { vines: 10_000, queued: 100, warmup: 10, count: 100 };
}

/** Mid-way through the vines' last changes (one second apart from SINCE). */
function midway(vines) {
  return new Date(Date.parse(SINCE) + (vines / 2) * 1000).toISOString();
}

/** The requests measured: the first page (50) of each filter, with its counts. */
function requests(plan) {
  const since = encodeURIComponent(midway(plan.vines));
  return [
    { key: 'all', label: 'fleet, no filter, with counts', query: 'limit=50&counts=true' },
    { key: 'status', label: 'fleet status=FAILED, with counts', query: 'status=FAILED&limit=50&counts=true' },
    {
      key: 'drift_policy',
      label: 'fleet drift=drifted&policy=failed, with counts',
      query: 'drift=drifted&policy=failed&limit=50&counts=true',
    },
    {
      key: 'tag_changed',
      label: 'fleet tag=prod&changed_since, with counts',
      query: `tag=prod&changed_since=${since}&limit=50&counts=true`,
    },
    {
      key: 'rare',
      label: 'fleet status=PLANNED&drift=unknown&tag=edge (few match)',
      query: 'status=PLANNED&drift=unknown&tag=edge&limit=50&counts=true',
    },
    { key: 'next_page', label: 'fleet policy=passed, a page deep in the list', query: null },
  ];
}

export const fleet = {
  name: 'fleet',
  /** A minute or more of seeding: only with `--only fleet`. */
  byDefault: false,
  baselines: {
    'plain configurations page':
      'GET /api/cli/configurations?limit=50 with no filter and no counts (the list as it was before the fleet), one at a time from the same node:http keep-alive client against the same server and database, taking turns with the measured request (median latency).',
  },

  async run(ctx) {
    const plan = sizes(ctx.quick);
    for (const dialect of ctx.dialects) {
      const begin = performance.now();
      const database = await preparedDatabase(dialect, (url) => prepare(url, dialect, plan));
      ctx.log(
        `  ${dialect}: ${plan.vines.toLocaleString('en-US')} vines, ${(plan.vines * JOBS_PER_VINE).toLocaleString('en-US')} jobs seeded in ${((performance.now() - begin) / 1000).toFixed(1)} s`,
      );
      let medians;
      try {
        medians = await database.withClone(async (url) => {
          const server = await startControlPlaneProcess(url);
          try {
            return await measure(server.url, database.prepared, plan);
          } finally {
            await server.stop();
          }
        });
      } finally {
        await database.drop();
      }
      for (const { key, label } of requests(plan)) {
        const { value, baseline } = medians[key];
        ctx.log(`  ${dialect} ${key}: ${value.toFixed(2)} ms (plain page ${baseline.toFixed(2)} ms)`);
        ctx.record(
          figure({
            scenario: 'fleet',
            dialect,
            label: `fleet ${dialect}: ${label}`,
            metric: `median latency at ${plan.vines.toLocaleString('en-US')} vines`,
            unit: 'ms',
            value,
            baseline: { name: 'plain configurations page', value: baseline, unit: 'ms' },
            better: 'lower',
            aim: aims.valueBelow(BOUND_MS, `< ${BOUND_MS} ms`),
            details: { vines: plan.vines, jobs: plan.vines * JOBS_PER_VINE, matching: medians[key].matching },
          }),
        );
      }
    }
  },
};

/** The owner, an organization it belongs to, the template vine and job through the use cases; the rest in bulk. */
export async function prepare(url, dialect, plan) {
  const made = await withUseCases(url, async (useCases) => {
    const owner = await createOwner(useCases);
    const org = await useCases.orgs.create(owner.actor, { name: 'fleet-org' });
    const orgVineyard = await useCases.vineyards.create(owner.actor, { name: 'fleet-org-yard', org_id: org.id });
    const vineyard = await useCases.vineyards.create(owner.actor, { name: 'fleet' });
    const vine = await useCases.vines.create(owner.actor, {
      name: 'fleet-template',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
      variables: {},
    });
    const job = await useCases.jobs.create(owner.actor, { job_type: 'PLAN', configuration_id: vine.id });
    return { owner, orgId: org.id, orgVineyardId: orgVineyard.id, templateVineId: vine.id, templateJobId: job.id };
  });
  const knex = rawKnex(url);
  try {
    await seedInBulk(knex, dialect, {
      ownerId: made.owner.actor.userId,
      templateVineId: made.templateVineId,
      templateJobId: made.templateJobId,
      vines: plan.vines,
      jobsPerVine: JOBS_PER_VINE,
      queued: plan.queued,
      chunksPerJob: 1,
      since: SINCE,
    });
    await spreadStandings(knex, dialect, made);
    return { accessToken: made.owner.accessToken };
  } finally {
    await knex.destroy();
  }
}

/**
 * Every other vine (and its jobs) goes to the organization; statuses, drift results, policy
 * results and tags are spread by the vine's insertion number, so each filter matches a share.
 */
async function spreadStandings(knex, dialect, made) {
  const seeded = "name LIKE 'scale-vine-%'";
  await knex.raw(
    `UPDATE jobs SET owner_id = ? WHERE vine_id IN (SELECT id FROM vines WHERE (${seeded}) AND seq % 2 = 0)`,
    [made.orgId],
  );
  await knex.raw(`UPDATE log_chunks SET owner_id = ? WHERE job_id IN (SELECT id FROM jobs WHERE owner_id = ?)`, [
    made.orgId,
    made.orgId,
  ]);
  await knex.raw(`UPDATE vines SET owner_id = ?, vineyard_id = ? WHERE (${seeded}) AND seq % 2 = 0`, [
    made.orgId,
    made.orgVineyardId,
  ]);
  const json = (text) => (dialect === 'postgres' ? `'${text}'::jsonb` : `'${text}'`);
  const drift = (status) =>
    json(
      `{"status":"${status}","checked_at":"${SINCE}","job_id":"00000000-0000-4000-8000-000000000000","changes":null}`,
    );
  await knex.raw(
    `UPDATE vines SET
       status = CASE WHEN seq % 10 = 0 THEN 'FAILED' WHEN seq % 10 = 1 THEN 'PLANNED' WHEN seq % 10 = 2 THEN 'NEW' ELSE 'DEPLOYED' END,
       drift = CASE WHEN seq % 7 = 0 THEN ${drift('drifted')} WHEN seq % 7 = 1 THEN ${drift('in_sync')} WHEN seq % 7 = 2 THEN ${drift('unknown')} ELSE NULL END,
       plan_policy = CASE WHEN seq % 5 = 0 THEN 'failed' WHEN seq % 5 IN (1, 2) THEN 'passed' ELSE NULL END,
       tags = CASE WHEN seq % 3 = 0 THEN ${json('["prod","web"]')} WHEN seq % 3 = 1 THEN ${json('["staging"]')} WHEN seq % 97 = 5 THEN ${json('["edge"]')} ELSE ${json('[]')} END
     WHERE ${seeded}`,
  );
  if (dialect === 'postgres') await knex.raw('ANALYZE');
}

/**
 * Median milliseconds of each request and of the plain page, taking turns request by request
 * (each going first every other time), after a warm-up.
 */
async function measure(url, prepared, plan) {
  const client = loadClient(url, { sockets: 1 });
  const headers = { Authorization: `Bearer ${prepared.accessToken}` };
  const get = async (path) => {
    const begin = performance.now();
    const response = await client.expect(200, 'GET', path, { headers });
    return { ms: performance.now() - begin, response };
  };
  try {
    // The cursor of a page deep in a filtered list: walk there once, untimed.
    let deep = '/api/cli/configurations?policy=passed&limit=50';
    for (let pages = 0; pages < 20; pages += 1) {
      const { response } = await get(deep);
      const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers?.link ?? '')?.[1];
      if (!next) break;
      deep = next;
    }
    const medians = {};
    for (const { key, query } of requests(plan)) {
      const path = query === null ? deep : `/api/cli/configurations?${query}`;
      const timings = { value: [], baseline: [] };
      let matching = null;
      for (let i = 0; i < plan.warmup + plan.count; i += 1) {
        const order = i % 2 === 0 ? ['value', 'baseline'] : ['baseline', 'value'];
        for (const which of order) {
          const { ms, response } = await get(which === 'value' ? path : '/api/cli/configurations?limit=50');
          if (i >= plan.warmup) timings[which].push(ms);
          if (which === 'value' && matching === null) matching = response.body.counts?.total ?? null;
        }
      }
      medians[key] = {
        value: percentile(timings.value, 50),
        baseline: percentile(timings.baseline, 50),
        matching,
      };
    }
    return medians;
  } finally {
    client.close();
  }
}
