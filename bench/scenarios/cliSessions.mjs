/**
 * Stock-CLI sessions (issue 31): 1,000 `tofu plan` sessions of the `cloud {}` block (40 with
 * --quick) polling the Terraform Cloud API at the CLI's own cadence, spread over 20 organizations
 * (teams) of 50 sessions each, while those teams' agents heartbeat and post log chunks.
 *
 * What a session sends is what OpenTofu's cloud backend and go-tfe send (read off their sources):
 * - while its run is pending (`waitForRun`): `GET /runs/:id` after backoff(1 s, 3 s, i), where
 *   backoff(min, max, i) = min(min · 2^(i/5), max); on its first pass and every 30 s after, the
 *   workspace (`GET /organizations/:org/workspaces/:name`), the workspace's runs (it has no
 *   `current-run`), the organization's run queue page by page until the run is found, and the
 *   organization's capacity when the run has a place in it;
 * - once its plan runs (`Plans.Logs`): `GET /plans/:id` for the `log-read-url`, then the log by
 *   byte offset (`?limit=65536&offset=`): again at once after bytes came, else after
 *   backoff(0.5 s, 2 s, reads), and `GET /plans/:id` every 10th empty read (go-tfe's done check).
 * 60% of the sessions follow a running plan (claimed at setup by one agent each), 40% wait in
 * the queue. Every agent heartbeats every 30 s and posts a log chunk every 10 s.
 *
 * Figures: p50 and p99 of the sessions' requests (the agents' are reported apart), server CPU per
 * session-second, requests per second. The baseline is the same load generator against a bare
 * node:http server answering every one of those paths with a body of the same shape: the floor
 * that HTTP and this load generator set.
 */
import { cpuSecondsOf, rssOf, startBareServer, startControlPlaneProcess } from '../lib/processes.mjs';
import { preparedDatabase } from '../lib/databases.mjs';
import { loadClient, workerHeaders } from '../lib/loadClient.mjs';
import { percentile, sleep } from '../lib/load.mjs';
import { aims, figure } from '../lib/report.mjs';
import { createOwner, registerAgents, withUseCases } from '../lib/setup.mjs';

const SESSIONS = 1000;
const QUICK_SESSIONS = 40;
const SESSIONS_PER_ORG = 50;
const QUICK_SESSIONS_PER_ORG = 20;
const RUNNING_SHARE = 0.6;
const LOG_READ_LIMIT = 64 * 1024;
const STATUS_EVERY_MS = 30_000;
const HEARTBEAT_EVERY_MS = 30_000;
const LOG_POST_EVERY_MS = 10_000;
const JSON_API = { Accept: 'application/vnd.api+json' };
const MAIN_TF = 'resource "terraform_data" "a" {}\n';
const METRICS_TOKEN = 'bench-metrics-token';

/** OpenTofu's and go-tfe's backoff: min · 2^(i/5) milliseconds, at most max. */
export const backoff = (min, max, i) => Math.min(min * 2 ** (i / 5), max);

export const cliSessions = {
  name: 'cli-sessions',
  byDefault: false,
  baselines: {
    'bare node:http':
      'The same sessions and agents, at the same cadence, against a node:http server in its own process answering each path with a body of the same shape: no framework, authentication or database.',
  },

  async run(ctx) {
    const sessions = ctx.quick ? QUICK_SESSIONS : SESSIONS;
    const perOrg = ctx.quick ? QUICK_SESSIONS_PER_ORG : SESSIONS_PER_ORG;
    const rampSeconds = ctx.quick ? 3 : 15;
    const windowSeconds = ctx.quick ? 15 : 90;
    for (const dialect of ctx.dialects) {
      ctx.log(`  ${dialect}: setting up ${sessions} runs in ${Math.ceil(sessions / perOrg)} organizations…`);
      const database = await preparedDatabase(dialect, (url) =>
        withUseCases(url, (useCases) => setUp(useCases, sessions, perOrg)),
      );
      try {
        const teams = database.prepared;
        const plan = { rampSeconds, windowSeconds };
        const trellis = await database.withClone(async (url) => {
          // The claimed plans never end here; a long lost-job timeout keeps them running whatever
          // the heartbeats' timing on a loaded machine.
          const server = await startControlPlaneProcess(url, {
            env: { TRELLIS_LOST_JOB_TIMEOUT_S: '3600', TRELLIS_METRICS_TOKEN: METRICS_TOKEN },
          });
          try {
            await discover(server.url, teams);
            const perRequest = await costPerRequest(server, teams, ctx.quick ? 300 : 300);
            return { ...(await measure(server, teams, plan)), per_request: perRequest };
          } finally {
            await server.stop();
          }
        });
        const bare = await startBareServer();
        let baseline;
        try {
          baseline = await measure(bare, teams, plan);
        } finally {
          await bare.stop();
        }
        ctx.log(
          `  ${dialect}: ${sessions} sessions, ${trellis.requests_per_s.toFixed(0)} requests/s: ` +
            `p50 ${trellis.p50.toFixed(1)} ms, p99 ${trellis.p99.toFixed(1)} ms ` +
            `(bare ${baseline.p50.toFixed(1)} / ${baseline.p99.toFixed(1)} ms), ` +
            `server CPU ${trellis.cpu_ms_per_session_s.toFixed(2)} ms per session-second, ` +
            `${trellis.failures} failed, ${trellis.unexpected} unexpected answers`,
        );
        // A request that failed or answered what the CLI would not expect is a finding, not noise:
        // said here, counted in the JSON, and the p99 aim is not met with any.
        if (trellis.failures > 0 || trellis.unexpected > 0) {
          ctx.log(`  ${dialect}: !! failed or unexpected answers, e.g. ${JSON.stringify(trellis.failure_samples)}`);
        }
        for (const [kind, cost] of Object.entries(trellis.per_request)) {
          ctx.log(
            `    ${kind}: ${cost.units_of_work.toFixed(1)} units of work, ${cost.cpu_ms.toFixed(2)} ms server CPU per request`,
          );
        }
        const details = { sessions, organizations: teams.length, ...plan, trellis, bare: baseline };
        const label = `stock-CLI sessions ${dialect} ×${sessions}`;
        for (const [metric, key, aim] of [
          ['request p50', 'p50', null],
          ['request p99', 'p99', aims.valueBelow(250, 'p99 < 250 ms, every request answered')],
        ]) {
          const measured = figure({
            scenario: 'cli-sessions',
            dialect,
            label,
            metric,
            unit: 'ms',
            value: trellis[key],
            baseline: { name: 'bare node:http', value: baseline[key] },
            better: 'lower',
            aim,
            details,
          });
          // A failed request has no latency to count: with any, the p99 aim is not met.
          if (measured.aim && trellis.failures + trellis.unexpected > 0) measured.aim.met = false;
          ctx.record(measured);
        }
        ctx.record(
          figure({
            scenario: 'cli-sessions',
            dialect,
            label,
            metric: 'server CPU per session-second',
            unit: 'ms',
            value: trellis.cpu_ms_per_session_s,
            baseline: { name: 'bare node:http', value: baseline.cpu_ms_per_session_s },
            better: 'lower',
            details,
          }),
        );
      } finally {
        await database.drop();
      }
    }
  },
};

/**
 * Teams of `perOrg` sessions: a user (its personal organization), the API token `tofu login`
 * would mint, one workspace per session with an uploaded configuration version and a run, and
 * one agent per running session that claims its plan. Made through the use cases (setup only).
 */
export async function setUp(useCases, sessions, perOrg) {
  const { tarGz, chunksOf } = await import('@trellis/testkit/tarballs');
  const archive = tarGz([{ path: 'main.tf', content: MAIN_TF }]);
  const teams = [];
  for (let t = 0; t * perOrg < sessions; t += 1) {
    const size = Math.min(perOrg, sessions - t * perOrg);
    const owner = await createOwner(useCases, `cli-team-${t}@example.com`);
    const { token } = await useCases.apiTokens.create(owner.actor, { name: 'tofu-login' });
    const { username: organization } = await useCases.tfe.login.accountDetails(owner.actor);
    const runs = [];
    for (let s = 0; s < size; s += 1) {
      const workspace = await useCases.tfe.workspaces.create(owner.actor, organization, { name: `app-${s}` });
      const vineId = workspace.vine.id;
      const pending = await useCases.configurationVersions.create({
        owner_id: owner.actor.userId,
        vine_id: vineId,
        source: 'upload',
        strip_components: 0,
        created_by: owner.actor.userId,
      });
      const version = await useCases.configurationVersions.ingest(pending, chunksOf(archive));
      const created = await useCases.tfe.runs.create(owner.actor, {
        attributes: { 'is-destroy': false, refresh: true, 'auto-apply': false },
        workspace_id: `ws-${vineId}`,
        configuration_version_id: `cv-${version.id}`,
      });
      runs.push({
        jobId: created.plan.id,
        runId: `run-${created.plan.id}`,
        planId: null,
        workspaceId: `ws-${vineId}`,
        workspaceName: `app-${s}`,
        running: false,
        queuePages: 1,
      });
    }
    // The oldest runs are claimed first: one agent each, like a team's pool at full use.
    const running = Math.round(size * RUNNING_SHARE);
    const agents = await registerAgents(useCases, owner, running, `cli-team-${t}-agent`);
    for (const agent of agents) {
      const claimed = await useCases.jobs.claim({ workerId: agent.workerId, ownerId: agent.ownerId }, [
        'upload_source',
        'run_options',
      ]);
      if (!claimed) throw new Error('a queued run was not claimed at setup');
      const run = runs.find((one) => one.jobId === claimed.job.id);
      run.running = true;
      agent.jobId = claimed.job.id;
      agent.seq = 0;
    }
    teams.push({ organization, token, runs, agents });
  }
  return teams;
}

/**
 * Before the measured runs: each run's plan id from its own answer (as the CLI takes it from the
 * run), that a running one is `planning` and a waiting one `pending`, and on which page of its
 * organization's run queue a waiting one is found (the pages the CLI reads every 30 s).
 */
export async function discover(url, teams) {
  const client = loadClient(url, { sockets: 16 });
  try {
    for (const team of teams) {
      const headers = { ...JSON_API, Authorization: `Bearer ${team.token}` };
      for (const run of team.runs) {
        const { body } = await client.expect(200, 'GET', `/api/v2/runs/${run.runId}`, { headers });
        const expected = run.running ? 'planning' : 'pending';
        if (body.data.attributes.status !== expected) {
          throw new Error(`run ${run.runId} is ${body.data.attributes.status}, not ${expected}`);
        }
        run.planId = body.data.relationships.plan.data.id;
      }
      const pages = new Map();
      for (let page = 1; ; page += 1) {
        const { body } = await client.expect(
          200,
          'GET',
          `/api/v2/organizations/${team.organization}/runs/queue?page%5Bnumber%5D=${page}`,
          { headers },
        );
        for (const item of body.data) pages.set(item.id, page);
        if (!body.meta?.pagination?.['next-page']) break;
      }
      for (const run of team.runs) {
        if (run.running) continue;
        if (!pages.has(run.runId)) throw new Error(`run ${run.runId} is not in its organization's queue`);
        run.queuePages = pages.get(run.runId);
      }
    }
  } finally {
    client.close();
  }
}

/**
 * What one request of each kind the sessions send costs the server, asked one after another
 * (`count` of each, after 20 not counted): its units of work (database connections lent, from
 * `trellis_db_pool_acquires_total`: a count, whatever the machine's load) and its CPU time.
 */
async function costPerRequest(server, teams, count) {
  const client = loadClient(server.url, { sockets: 1 });
  const metricsHeaders = { Authorization: `Bearer ${METRICS_TOKEN}` };
  const unitsOfWork = async () => {
    const { body } = await client.expect(200, 'GET', '/metrics', { headers: metricsHeaders });
    return Number(/^trellis_db_pool_acquires_total (\d+)/m.exec(body)?.[1]);
  };
  const team = teams[0];
  const headers = { ...JSON_API, Authorization: `Bearer ${team.token}` };
  const waiting = team.runs.find((run) => !run.running);
  const running = team.runs.find((run) => run.running);
  try {
    const plan = await client.expect(200, 'GET', `/api/v2/plans/${running.planId}`, { headers });
    const logPath = new URL(plan.body.data.attributes['log-read-url'], server.url).pathname;
    const org = team.organization;
    const kinds = {
      'run read': `/api/v2/runs/${waiting.runId}`,
      'plan read': `/api/v2/plans/${running.planId}`,
      'log read': `${logPath}?limit=${LOG_READ_LIMIT}&offset=1000000`,
      'workspace read': `/api/v2/organizations/${org}/workspaces/${waiting.workspaceName}`,
      'workspace runs': `/api/v2/workspaces/${waiting.workspaceId}/runs`,
      'run queue page': `/api/v2/organizations/${org}/runs/queue`,
      capacity: `/api/v2/organizations/${org}/capacity`,
    };
    const costs = {};
    for (const [kind, path] of Object.entries(kinds)) {
      for (let i = 0; i < 20; i += 1) await client.expect(200, 'GET', path, { headers });
      const units = await unitsOfWork();
      const cpu = cpuSecondsOf(server.pid);
      for (let i = 0; i < count; i += 1) await client.expect(200, 'GET', path, { headers });
      const cpuMs = ((cpuSecondsOf(server.pid) - cpu) * 1000) / count;
      costs[kind] = { units_of_work: ((await unitsOfWork()) - units) / count, cpu_ms: cpuMs };
    }
    return costs;
  } finally {
    client.close();
  }
}

/**
 * Every session and agent against `server` for the ramp (sessions start spread over it) and the
 * window; only requests started inside the window count.
 */
async function measure(server, teams, { rampSeconds, windowSeconds }) {
  const sessionCount = teams.reduce((sum, team) => sum + team.runs.length, 0);
  const agentCount = teams.reduce((sum, team) => sum + team.agents.length, 0);
  const client = loadClient(server.url, { sockets: sessionCount + agentCount });
  const begin = performance.now();
  const windowStart = begin + rampSeconds * 1000;
  const windowEnd = windowStart + windowSeconds * 1000;
  const latencies = new Map();
  const stats = { failures: 0, unexpected: 0, retried: 0, samples: [] };
  let stopped = false;

  const timed = async (kind, method, path, options, check) => {
    const started = performance.now();
    let answer;
    try {
      answer = await client.send(method, path, options);
    } catch (error) {
      // Go's transport sends a request again, once, when a kept-alive connection it reused breaks
      // before any answer (an idempotent one; the agents' log posts are idempotent by seq too).
      try {
        if (error?.code !== 'ECONNRESET' && error?.code !== 'EPIPE') throw error;
        stats.retried += 1;
        answer = await client.send(method, path, options);
      } catch (again) {
        if (started >= windowStart && started < windowEnd) note(stats, `${kind}: ${again.message}`);
        return null;
      }
    }
    if (started >= windowStart && started < windowEnd) {
      const list = latencies.get(kind) ?? [];
      list.push(performance.now() - started);
      latencies.set(kind, list);
      if (answer.status >= 300) note(stats, `${kind} answered ${answer.status}`);
      else if (check && !check(answer.body)) note(stats, `${kind}: unexpected answer`, 'unexpected');
    }
    return answer;
  };
  const wait = (ms) => sleep(Math.max(0, Math.min(ms, windowEnd - performance.now())));
  const over = () => stopped || performance.now() >= windowEnd;

  const session = async (team, run) => {
    const headers = { ...JSON_API, Authorization: `Bearer ${team.token}` };
    const org = team.organization;
    await wait(Math.random() * rampSeconds * 1000);
    if (!run.running) {
      // waitForRun: the run stays pending (no agent of the team is free).
      let lastStatus = -Infinity;
      for (let i = 0; !over(); i += 1) {
        await wait(backoff(1000, 3000, i));
        if (over()) break;
        await timed('run read', 'GET', `/api/v2/runs/${run.runId}`, { headers }, (body) =>
          ['pending', 'plan_queued'].includes(body?.data?.attributes?.status),
        );
        if (i !== 0 && performance.now() - lastStatus <= STATUS_EVERY_MS) continue;
        lastStatus = performance.now();
        await timed('workspace read', 'GET', `/api/v2/organizations/${org}/workspaces/${run.workspaceName}`, {
          headers,
        });
        await timed('workspace runs', 'GET', `/api/v2/workspaces/${run.workspaceId}/runs`, { headers });
        for (let page = 1; page <= run.queuePages; page += 1) {
          await timed('run queue page', 'GET', `/api/v2/organizations/${org}/runs/queue?page%5Bnumber%5D=${page}`, {
            headers,
          });
        }
        await timed('capacity', 'GET', `/api/v2/organizations/${org}/capacity`, { headers });
      }
      return;
    }
    // waitForRun returns at its first read (the run is planning); then Plans.Logs.
    await wait(backoff(1000, 3000, 0));
    await timed('run read', 'GET', `/api/v2/runs/${run.runId}`, { headers });
    const plan = await timed('plan read', 'GET', `/api/v2/plans/${run.planId}`, { headers });
    const logUrl = plan?.body?.data?.attributes?.['log-read-url'];
    if (typeof logUrl !== 'string') return;
    const logPath = new URL(logUrl, server.url);
    let offset = 0;
    let reads = 0;
    while (!over()) {
      const answer = await timed('log read', 'GET', `${logPath.pathname}?limit=${LOG_READ_LIMIT}&offset=${offset}`, {
        headers: { Accept: '*/*' },
      });
      const bytes = typeof answer?.body === 'string' ? Buffer.byteLength(answer.body) : 0;
      if (bytes > 0) {
        offset += bytes;
        reads = 0;
        continue;
      }
      reads += 1;
      if (reads % 10 === 0) await timed('plan read', 'GET', `/api/v2/plans/${run.planId}`, { headers });
      await wait(backoff(500, 2000, reads));
    }
  };

  const agent = async (one) => {
    const headers = workerHeaders(one);
    const offset = Math.random() * LOG_POST_EVERY_MS;
    await wait(offset);
    let nextHeartbeat = performance.now() + Math.random() * HEARTBEAT_EVERY_MS;
    while (!over()) {
      one.seq += 1;
      await timed('agent log post', 'POST', `/api/jobs/${one.jobId}/logs`, {
        headers,
        json: {
          chunks: [
            { seq: one.seq, stream_type: 'STDOUT', log_chunk: `terraform_data.a: Refreshing... (${one.seq})\n` },
          ],
        },
      });
      if (performance.now() >= nextHeartbeat) {
        nextHeartbeat += HEARTBEAT_EVERY_MS;
        await timed('agent heartbeat', 'POST', '/api/workers/heartbeat', { headers, json: { version: 'bench' } });
      }
      await wait(LOG_POST_EVERY_MS);
    }
  };

  let cpuStart = null;
  const cpuMark = sleep(windowStart - performance.now()).then(() => {
    cpuStart = cpuSecondsOf(server.pid);
  });
  const workers = [
    ...teams.flatMap((team) => team.runs.map((run) => session(team, run))),
    ...teams.flatMap((team) => team.agents.map((one) => agent({ ...one }))),
  ];
  await cpuMark;
  await sleep(Math.max(0, windowEnd - performance.now()));
  const cpuEnd = cpuSecondsOf(server.pid);
  const rss = rssOf(server.pid);
  stopped = true;
  await Promise.all(workers);
  client.close();

  const cli = [...latencies.entries()].filter(([kind]) => !kind.startsWith('agent ')).flatMap(([, list]) => list);
  const byKind = Object.fromEntries(
    [...latencies.entries()].map(([kind, list]) => [
      kind,
      { requests: list.length, p50_ms: percentile(list, 50), p99_ms: percentile(list, 99) },
    ]),
  );
  const allRequests = [...latencies.values()].reduce((sum, list) => sum + list.length, 0);
  const cpuSeconds = cpuStart === null || cpuEnd === null ? null : cpuEnd - cpuStart;
  return {
    p50: percentile(cli, 50),
    p99: percentile(cli, 99),
    requests_per_s: allRequests / windowSeconds,
    cli_requests: cli.length,
    cpu_ms_per_session_s: cpuSeconds === null ? null : (cpuSeconds * 1000) / (sessionCount * windowSeconds),
    server_cpu_share: cpuSeconds === null ? null : cpuSeconds / windowSeconds,
    server_rss_mb: rss === null ? null : rss / 2 ** 20,
    by_kind: byKind,
    failures: stats.failures,
    retried_after_reset: stats.retried,
    unexpected: stats.unexpected,
    failure_samples: stats.samples,
  };
}

function note(stats, message, kind = 'failures') {
  stats[kind] += 1;
  if (stats.samples.length < 5) stats.samples.push(message);
}
