/**
 * Runs end to end (issue 31): N vines, K real `trellis-agent` processes (one job at a time each)
 * against a real `trellis-server`, with an engine that answers at once (`bench/fake-engine.sh`;
 * real OpenTofu with `--real-engine`), so what is measured is the orchestration. Three flows:
 *
 *   - PLAN→DEPLOY, a person's normal flow: a PLAN per vine, followed live (SSE) as `trellis plan`
 *     does, then as soon as it succeeded a DEPLOY of that plan (`trellis deploy --plan`), followed
 *     to its end. One run = the plan and its deploy.
 *   - one-job DEPLOY: a DEPLOY per vine that plans and applies in one job (`trellis deploy`).
 *   - auto-applied run: what `tofu apply -auto-approve` does through a `cloud {}` block, the flow
 *     of a Terraform Cloud run (and of OTF's plan+apply run): a run created through the Terraform
 *     Cloud API with `auto-apply` on a workspace whose configuration version is uploaded (untimed
 *     setup), applied by the server as its plan ends; the client follows the plan, then the apply.
 *
 * Everything a client does goes through the HTTP API (the current tree's TrellisClient), setup
 * included (untimed), so the same scenario drives another build's server and agents. Baseline:
 * another build measured in the same run, by default the commit before HEAD (`--baseline-rev`),
 * exported and built in a temp dir (lib/buildAtRev.mjs); the two builds take turns, round by
 * round (A B, B A, …), each on a fresh database, so an improvement shows as a same-run ratio.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TrellisClient } from '@trellis/client';
import { testPostgresAdminUrl } from '@trellis/testkit/databases';
import { buildAtRev, currentBuild } from '../lib/buildAtRev.mjs';
import { deferCleanup } from '../lib/cleanup.mjs';
import { withFreshDatabase } from '../lib/databases.mjs';
import { BOOTSTRAP_TOKEN, controlPlaneEnv } from '../lib/environment.mjs';
import { sleep } from '../lib/load.mjs';
import { samplePostgresCpu, statementStats } from '../lib/postgresCpu.mjs';
import { cpuSecondsOf, rssOf, sampleRss, startChild, startControlPlaneProcess } from '../lib/processes.mjs';
import { loadClient } from '../lib/loadClient.mjs';
import { figure } from '../lib/report.mjs';

const FAKE_ENGINE = fileURLToPath(new URL('../fake-engine.sh', import.meta.url));
const REAL_ENGINE = join(homedir(), '.cache/trellis-peers/bin/tofu');
export const FLOWS = ['plan-deploy', 'deploy', 'run'];
const FLOW_LABEL = { 'plan-deploy': 'PLAN→DEPLOY', deploy: 'one-job DEPLOY', run: 'auto-applied run' };
/** The flows of a plan and then its apply, two jobs (the figures between them apply). */
const twoJobs = (flow) => flow !== 'deploy';
const MB = 1024 * 1024;

/** `terraform_data` is built into OpenTofu: no provider to download, a real plan and apply. */
const MAIN_TF = `variable "n" {
  default = "0"
}
resource "terraform_data" "bench" {
  input = var.n
}
output "n" {
  value = terraform_data.bench.output
}
`;

export const runs = {
  name: 'runs',
  // A baseline build takes a checkout and tsc -b: only when asked (--only runs).
  byDefault: false,
  baselines: {
    'previous commit':
      'runs: the same scenario (same vines, agents, fake engine, client) against the server and agent of another build, by default the commit before HEAD (--baseline-rev), exported with git archive and built in a temp dir; the two builds take turns round by round, each on a fresh database. With --quick and no --baseline-rev the baseline is this same build (checks the path, measures nothing).',
  },

  async run(ctx) {
    const options = ctx.options?.runs ?? {};
    const vines = options.vines ?? (ctx.quick ? 4 : 40);
    const agents = options.agents ?? (ctx.quick ? 2 : 4);
    const rounds = options.rounds ?? (ctx.quick ? 1 : 3);
    const flows = options.flows ?? FLOWS;
    const engine = options.realEngine ? REAL_ENGINE : FAKE_ENGINE;
    const trace = options.trace === true && !options.realEngine;
    if (options.realEngine && !existsSync(REAL_ENGINE)) {
      ctx.skip({ scenario: 'runs', reason: `--real-engine: no OpenTofu at ${REAL_ENGINE}` });
      return;
    }
    // BENCH_TODAY_NODE_ARGS: node options for this tree's server and agents only, e.g. to weigh
    // a V8 flag against the same build without it (`--baseline-rev HEAD`).
    const today = {
      ...(await currentBuild()),
      nodeArgs: (process.env.BENCH_TODAY_NODE_ARGS ?? '').split(' ').filter(Boolean),
    };
    let baseline;
    if (options.baselineRev === undefined && ctx.quick) {
      baseline = { ...today, nodeArgs: [], label: 'this tree again (--quick)' };
    } else {
      baseline = await buildAtRev(options.baselineRev ?? 'HEAD~1', ctx.log);
    }
    try {
      for (const dialect of ctx.dialects) {
        for (const flow of flows) {
          const samples = { today: [], baseline: [] };
          for (let round = 0; round < rounds; round += 1) {
            const order = round % 2 === 0 ? ['today', 'baseline'] : ['baseline', 'today'];
            for (const which of order) {
              const build = which === 'today' ? today : baseline;
              const load = loadavg()[0];
              ctx.log(
                `runs ${dialect} ${FLOW_LABEL[flow]}, round ${round + 1}/${rounds}, ${which} (${build.label}): ${vines} vines, ${agents} agents, load ${load.toFixed(1)}`,
              );
              const result = await withFreshDatabase(dialect, (url) =>
                measureRuns({
                  url,
                  dialect,
                  flow,
                  build,
                  vines,
                  agents,
                  engine,
                  trace,
                  settleMs: ctx.quick ? 300 : 1500,
                  log: ctx.log,
                }),
              );
              result.loadavg_1m_before = load;
              samples[which].push(result);
              ctx.log(
                `  ${result.runs_per_minute.toFixed(1)} runs/min, queue ${result.queue_ms.toFixed(0)} ms, ` +
                  `plan end → apply start p50 ${fmt(result.plan_end_to_apply_start_ms?.p50)} ms, ` +
                  (result.deploys_on_plan_agent !== null
                    ? `deploys on their plan's agent ${result.deploys_on_plan_agent}/${result.vines}, `
                    : '') +
                  `server CPU ${fmt(result.server_cpu_ms_per_run)} ms/run, agent CPU ${fmt(result.agent_cpu_ms_per_run)} ms/run` +
                  (result.postgres_cpu_ms_per_run !== null
                    ? `, Postgres ${fmt(result.postgres_cpu_ms_per_run)} ms/run`
                    : ''),
              );
            }
          }
          recordFigures(ctx, { dialect, flow, samples, today, baseline, vines, agents, rounds, engine });
        }
      }
    } finally {
      await baseline.remove?.();
    }
  },
};

function fmt(value) {
  return value === null || value === undefined ? '—' : value.toFixed(1);
}

/** The figures of one flow on one dialect: the median over the rounds of each build, side by side. */
function recordFigures(ctx, { dialect, flow, samples, today, baseline, vines, agents, rounds, engine }) {
  const label = `runs ${dialect} ${FLOW_LABEL[flow]}${engine === FAKE_ENGINE ? '' : ' (OpenTofu)'}`;
  const middleOf = (which, pick) => {
    const values = samples[which].map(pick).filter((value) => value !== null && value !== undefined);
    return values.length === 0 ? null : median(values);
  };
  const details = {
    flow,
    vines,
    agents,
    rounds,
    engine: engine === FAKE_ENGINE ? 'fake (bench/fake-engine.sh)' : engine,
    today: { build: today.label, rev: today.rev, rounds: samples.today },
    baseline: { build: baseline.label, rev: baseline.rev, rounds: samples.baseline },
  };
  const rows = [
    ['runs per minute', '/min', 'higher', (r) => r.runs_per_minute],
    [`time to queue ${vines} runs`, 'ms', 'lower', (r) => r.queue_ms],
    ['job creation p50', 'ms', 'lower', (r) => r.creation_ms.p50],
    ['job creation p99', 'ms', 'lower', (r) => r.creation_ms.p99],
    ...(twoJobs(flow)
      ? [
          ['plan end → apply start p50', 'ms', 'lower', (r) => r.plan_end_to_apply_start_ms.p50],
          ['plan job duration p50', 'ms', 'lower', (r) => r.plan_duration_ms.p50],
        ]
      : []),
    ['deploy job duration p50', 'ms', 'lower', (r) => r.deploy_duration_ms.p50],
    ...(twoJobs(flow)
      ? [
          ["deploy duration p50, on the plan's agent", 'ms', 'lower', (r) => r.deploy_duration_on_plan_agent_ms.p50],
          ['deploy duration p50, on another agent', 'ms', 'lower', (r) => r.deploy_duration_elsewhere_ms.p50],
        ]
      : []),
    ['queue → start p99', 'ms', 'lower', (r) => r.queue_to_start_ms.p99],
    ['server CPU per run', 'ms', 'lower', (r) => r.server_cpu_ms_per_run],
    ['agent CPU per run', 'ms', 'lower', (r) => r.agent_cpu_ms_per_run],
    ...(dialect === 'postgres'
      ? [['Postgres backend CPU per run', 'ms', 'lower', (r) => r.postgres_cpu_ms_per_run]]
      : []),
    ['server RSS idle', 'MB', 'lower', (r) => r.server_rss_idle_mb],
    ['server RSS under load (peak)', 'MB', 'lower', (r) => r.server_rss_peak_mb],
    ['agent RSS per agent (peak)', 'MB', 'lower', (r) => r.agent_rss_peak_mb],
  ];
  rows.forEach(([metric, unit, better, pick], index) => {
    const value = middleOf('today', pick);
    const base = middleOf('baseline', pick);
    // A figure one side lacks (e.g. no DEPLOY landed on another agent in its rounds) compares
    // with nothing: the rounds' JSON keeps it, the table leaves it out.
    if (value === null || base === null) return;
    ctx.record(
      figure({
        scenario: 'runs',
        dialect,
        label,
        metric,
        unit,
        value,
        baseline: { name: 'previous commit', value: base },
        better,
        // Every round's figures are in the first row's details (the JSON), not repeated per row.
        details: index === 0 ? details : { flow },
      }),
    );
  });
}

/** The middle value of a non-empty list (the mean of the two middle ones for an even count). */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Sorted-rank percentile (p in 0–100) of a non-empty list. */
function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function spread(values) {
  if (values.length === 0) return { p50: null, p99: null, max: null, count: 0 };
  return { p50: percentile(values, 50), p99: percentile(values, 99), max: Math.max(...values), count: values.length };
}

/** A signed-in user (bootstrap sign-in, then a CLI token, as `trellis login` gets one). */
async function signIn(url) {
  const bootstrap = await fetch(`${url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`, { redirect: 'manual' });
  const cookie = (bootstrap.headers.get('set-cookie') ?? '').split(';')[0];
  if (!cookie) throw new Error(`bootstrap sign-in failed: ${bootstrap.status}`);
  // The web origin the control plane is configured with (lib/environment.mjs), not its own address.
  const origin = new URL(controlPlaneEnv({}).TRELLIS_WEB_URL).origin;
  const web = new TrellisClient({ baseUrl: url, auth: { kind: 'cookie', cookie, origin } });
  const deviceCode = crypto.randomUUID();
  const { verification_code } = await web.generateCliLogin(deviceCode);
  const { access_token } = await web.exchangeCliLogin({ device_code: deviceCode, verification_code });
  return new TrellisClient({
    baseUrl: url,
    auth: { kind: 'bearer', accessToken: () => access_token },
    userAgent: 'trellis-bench',
  });
}

/**
 * Follows a job live to its end as the CLI does (the SSE log stream, reconnecting after the last
 * chunk when it drops); returns its final status and when the client learnt it.
 */
async function followToEnd(client, id) {
  let after = 0;
  for (let attempt = 0; ; attempt += 1) {
    try {
      for await (const event of client.streamJobLogs(id, { after })) {
        if (event.type === 'log') after = event.chunk.id;
        if (event.type === 'end') return { status: event.status, seenAt: Date.now() };
      }
    } catch (error) {
      if (attempt >= 8) throw error;
    }
    await sleep(100);
  }
}

/**
 * The Terraform Cloud API as the stock CLI calls it (JSON:API bodies, the API token `tofu login`
 * stores), for the auto-applied run: each vine is a workspace (`ws-<id>`) given one uploaded
 * configuration version at setup; `createRun` then starts a run with `auto-apply` on it, as
 * `tofu apply -auto-approve` does once its upload is done.
 */
async function terraformCloudApi(url, user, configurations) {
  const { tarGz } = await import('@trellis/testkit/tarballs');
  const { token } = await user.createToken({ name: 'bench-tofu-login' });
  const client = loadClient(url, { sockets: 4 });
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/vnd.api+json' };
  const call = async (status, method, path, json) =>
    (await client.expect(status, method, `/api/v2${path}`, { headers, json })).body;
  const archive = tarGz([{ path: 'main.tf', content: MAIN_TF }]);
  const versions = new Map();
  for (const configuration of configurations) {
    const { data } = await call(201, 'POST', `/workspaces/ws-${configuration.id}/configuration-versions`, {
      data: { type: 'configuration-versions', attributes: { 'auto-queue-runs': false } },
    });
    // The signed URL names the configured public address; the server listens on its own port.
    const signed = new URL(data.attributes['upload-url']);
    const upload = await fetch(`${url}${signed.pathname}${signed.search}`, { method: 'PUT', body: archive });
    if (!upload.ok) throw new Error(`configuration upload: ${upload.status} ${await upload.text()}`);
    versions.set(configuration.id, data.id);
  }
  return {
    async createRun(vineId) {
      const { data } = await call(201, 'POST', '/runs', {
        data: {
          type: 'runs',
          attributes: { 'auto-apply': true },
          relationships: {
            workspace: { data: { type: 'workspaces', id: `ws-${vineId}` } },
            'configuration-version': { data: { type: 'configuration-versions', id: versions.get(vineId) } },
          },
        },
      });
      return { planJobId: data.id.slice('run-'.length) };
    },
    close: () => client.close(),
  };
}

/**
 * An auto-applied run followed to its end: its plan live, then the DEPLOY the server queued as the
 * plan ended (found among the vine's jobs), live too.
 */
async function followRun(user, vineId, planJobId) {
  const ended = await followToEnd(user, planJobId);
  if (ended.status !== 'SUCCESS') throw new Error(`the run's plan ${planJobId} ended ${ended.status}`);
  const deploy = (await user.listJobs({ vine_id: vineId })).find((job) => job.plan_job_id === planJobId);
  if (!deploy) throw new Error(`the server queued no apply after the run's plan ${planJobId}`);
  const applied = await followToEnd(user, deploy.id);
  if (applied.status !== 'SUCCESS') throw new Error(`the run's apply ${deploy.id} ended ${applied.status}`);
  return { plan: planJobId, deploy: deploy.id, planSeenAt: ended.seenAt };
}

/** Registered agents as real `trellis-agent` processes, each its own work dir, one job at a time. */
async function startAgents(build, url, registrations, engine, dir, tracePath) {
  const started = await Promise.all(
    registrations.map(async (registration, index) => {
      const workDir = join(dir, `agent-${index}`);
      const level = process.env.BENCH_AGENT_LOG_DIR ? 'debug' : 'info';
      const child = await startChild(build.agentBin, ['run', '--work-dir', workDir, '--log-level', level], {
        name: `trellis-agent ${index}`,
        env: {
          TRELLIS_URL: url,
          TRELLIS_WORKER_ID: registration.worker_id,
          TRELLIS_WORKER_TOKEN: registration.worker_token,
          TRELLIS_ENGINE_BIN: engine,
          TRELLIS_AGENT_CONCURRENCY: '1',
          ...(tracePath ? { BENCH_ENGINE_TRACE: tracePath } : {}),
        },
        // BENCH_AGENT_LOG_DIR=<dir>: each agent's own log (JSON lines with their times) kept there.
        ...(process.env.BENCH_AGENT_LOG_DIR
          ? { onStderr: (text) => appendFileSync(join(process.env.BENCH_AGENT_LOG_DIR, `agent-${index}.log`), text) }
          : {}),
        // e.g. BENCH_AGENT_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the agents.
        nodeArgs: [...(process.env.BENCH_AGENT_NODE_ARGS ?? '').split(' ').filter(Boolean), ...(build.nodeArgs ?? [])],
        readyOn: 'stderr',
        ready: /"msg":"agent started"/,
      });
      return child;
    }),
  );
  return started;
}

/** One measurement: a fresh server, agents and vines of `build`; N runs of `flow` end to end. */
async function measureRuns({ url, dialect, flow, build, vines, agents, engine, trace, settleMs, log }) {
  const dir = await mkdtemp(join(tmpdir(), 'trellis-bench-runs-'));
  const removeDir = deferCleanup(() => rm(dir, { recursive: true, force: true }));
  let server = null;
  let started = [];
  let tfe = null;
  try {
    // Every run is followed live: one stream per vine, above the default per-user cap (20).
    server = await startControlPlaneProcess(url, {
      serverBin: build.serverBin,
      nodeArgs: build.nodeArgs ?? [],
      env: { TRELLIS_STREAMS_PER_USER: String(Math.max(20, vines * 2)) },
    });
    const user = await signIn(server.url);
    const vineyard = await user.createVineyard(`bench-runs-${flow}`);
    const configurations = [];
    for (let i = 0; i < vines; i += 1) {
      configurations.push(
        await user.createConfiguration({
          name: `bench-run-${i}`,
          vineyard_id: vineyard.id,
          source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
          variables: { n: String(i) },
        }),
      );
    }
    // The auto-applied run's workspaces are these vines, each with its configuration uploaded.
    tfe = flow === 'run' ? await terraformCloudApi(server.url, user, configurations) : null;
    const registrations = [];
    for (let i = 0; i < agents; i += 1) registrations.push(await user.registerAgent({ name: `bench-runner-${i}` }));
    const tracePath = trace ? join(dir, 'engine-trace') : null;
    started = await startAgents(build, server.url, registrations, engine, dir, tracePath);
    // Let start-up settle (first heartbeats, the agents' long-poll claims), then read idle memory.
    await sleep(settleMs);
    const serverRssIdle = rssOf(server.pid);
    const agentRssIdle = started.map((agent) => rssOf(agent.pid));

    const pgDatabase = dialect === 'postgres' ? new URL(url).pathname.slice(1) : null;
    const pgCpu = pgDatabase ? await samplePostgresCpu(testPostgresAdminUrl(), pgDatabase) : null;
    const serverRss = sampleRss(server.pid, 50);
    const agentRss = started.map((agent) => sampleRss(agent.pid, 50));
    const cpuBefore = {
      server: cpuSecondsOf(server.pid),
      agents: started.map((agent) => agentCpu(agent.pid)),
    };

    const creations = [];
    const timed = async (create) => {
      const t0 = performance.now();
      const created = await create();
      creations.push(performance.now() - t0);
      return created;
    };
    const createJob = (input) => timed(() => user.createJob(input));
    const runIds = [];
    const sessions = [];
    const begin = performance.now();
    const beganAt = Date.now();
    // Queued one after another, as a script of `trellis plan -d` (or `deploy`, or `tofu apply
    // -auto-approve`) would; each run is then followed on its own, and a PLAN's DEPLOY is queued
    // as soon as the client sees it succeed (the server queues an auto-applied run's).
    for (const configuration of configurations) {
      if (flow === 'run') {
        const run = await timed(() => tfe.createRun(configuration.id));
        sessions.push(followRun(user, configuration.id, run.planJobId));
        continue;
      }
      const first = await createJob({
        job_type: flow === 'plan-deploy' ? 'PLAN' : 'DEPLOY',
        configuration_id: configuration.id,
      });
      sessions.push(
        (async () => {
          const ended = await followToEnd(user, first.id);
          if (ended.status !== 'SUCCESS') throw new Error(`${first.job_type} job ${first.id} ended ${ended.status}`);
          if (flow === 'deploy') return { deploy: first.id };
          const deploy = await createJob({
            job_type: 'DEPLOY',
            configuration_id: configuration.id,
            plan_job_id: first.id,
          });
          const applied = await followToEnd(user, deploy.id);
          if (applied.status !== 'SUCCESS') throw new Error(`DEPLOY job ${deploy.id} ended ${applied.status}`);
          return { plan: first.id, deploy: deploy.id, planSeenAt: ended.seenAt };
        })(),
      );
    }
    const queueMs = performance.now() - begin;
    const queueCreations = creations.slice(0, vines);
    runIds.push(...(await Promise.all(sessions)));
    const wallMs = performance.now() - begin;

    const serverCpu = cpuSecondsOf(server.pid) - cpuBefore.server;
    const agentCpus = started.map((agent, index) => {
      const now = agentCpu(agent.pid);
      const before = cpuBefore.agents[index];
      return { own: now.own - before.own, engine: now.children - before.children };
    });
    const serverRssPeak = serverRss.stop().peak;
    const agentRssPeaks = agentRss.map((sampler) => sampler.stop().peak);
    const pg = pgCpu ? await pgCpu.stop() : null;

    // Timestamps as the control plane recorded them.
    const jobs = new Map();
    await Promise.all(
      runIds
        .flatMap((run) => Object.values(run).filter((value) => typeof value === 'string'))
        .map(async (id) => {
          jobs.set(id, await user.getJob(id));
        }),
    );
    const at = (value) => Date.parse(value);
    const duration = (job) => at(job.finished_at) - at(job.claimed_at);
    const plans = runIds.filter((run) => run.plan).map((run) => jobs.get(run.plan));
    const deploys = runIds.map((run) => jobs.get(run.deploy));
    const firstJobs = twoJobs(flow) ? plans : deploys;
    const planEndToApplyStart = runIds
      .filter((run) => run.plan)
      .map((run) => at(jobs.get(run.deploy).claimed_at) - at(jobs.get(run.plan).finished_at));
    const planEndToClientSaw = runIds
      .filter((run) => run.plan)
      .map((run) => run.planSeenAt - at(jobs.get(run.plan).finished_at));
    const deployQueuedToClaimed = runIds
      .filter((run) => run.plan)
      .map((run) => at(jobs.get(run.deploy).claimed_at) - at(jobs.get(run.deploy).created_at));
    const planEndToDeployCreated = runIds
      .filter((run) => run.plan)
      .map((run) => at(jobs.get(run.deploy).created_at) - at(jobs.get(run.plan).finished_at));
    const sameAgent = (run) => jobs.get(run.deploy).claimed_by_worker_id === jobs.get(run.plan).claimed_by_worker_id;
    const onPlanAgent = runIds.filter((run) => run.plan && sameAgent(run)).map((run) => jobs.get(run.deploy));
    const elsewhere = runIds.filter((run) => run.plan && !sameAgent(run)).map((run) => jobs.get(run.deploy));
    const agentOwn = agentCpus.reduce((sum, cpu) => sum + cpu.own, 0);
    const agentEngine = agentCpus.reduce((sum, cpu) => sum + cpu.engine, 0);
    const mean = (values) => {
      const known = values.filter((value) => value !== null);
      return known.length === 0 ? null : known.reduce((sum, value) => sum + value, 0) / known.length;
    };
    const result = {
      build: build.label,
      dialect,
      flow,
      vines,
      agents,
      wall_ms: wallMs,
      runs_per_minute: vines / (wallMs / 60_000),
      queue_ms: queueMs,
      creation_ms: spread(queueCreations),
      deploy_creation_ms: flow === 'plan-deploy' ? spread(creations.slice(vines)) : null,
      plan_end_to_apply_start_ms: twoJobs(flow) ? spread(planEndToApplyStart) : null,
      plan_end_to_client_saw_it_ms: twoJobs(flow) ? spread(planEndToClientSaw) : null,
      plan_end_to_deploy_created_ms: twoJobs(flow) ? spread(planEndToDeployCreated) : null,
      deploy_queued_to_claimed_ms: twoJobs(flow) ? spread(deployQueuedToClaimed) : null,
      // Issue 31: the DEPLOYs claimed by their plan's agent (the only ones that can run warm).
      deploys_on_plan_agent: twoJobs(flow) ? onPlanAgent.length : null,
      plan_duration_ms: twoJobs(flow) ? spread(plans.map(duration)) : null,
      deploy_duration_ms: spread(deploys.map(duration)),
      // The same durations apart: applied where the plan was made (warm, unless turned off) or
      // by another agent (the plan downloaded, the workspace made anew).
      deploy_duration_on_plan_agent_ms: twoJobs(flow) ? spread(onPlanAgent.map(duration)) : null,
      deploy_duration_elsewhere_ms: twoJobs(flow) ? spread(elsewhere.map(duration)) : null,
      queue_to_start_ms: spread(firstJobs.map((job) => at(job.claimed_at) - at(job.created_at))),
      first_created_to_last_finished_ms:
        at(
          deploys
            .map((job) => job.finished_at)
            .sort()
            .at(-1),
        ) - beganAt,
      server_cpu_ms_per_run: (serverCpu * 1000) / vines,
      agent_cpu_ms_per_run: (agentOwn * 1000) / vines,
      engine_cpu_ms_per_run: (agentEngine * 1000) / vines,
      postgres_cpu_ms_per_run: pg?.cpuSeconds != null ? (pg.cpuSeconds * 1000) / vines : null,
      postgres_backends_seen: pg?.backends ?? null,
      postgres_statements: dialect === 'postgres' ? await statementStats(url) : null,
      server_rss_idle_mb: serverRssIdle / MB,
      server_rss_peak_mb: serverRssPeak / MB,
      agent_rss_idle_mb: mean(agentRssIdle) / MB,
      agent_rss_peak_mb: mean(agentRssPeaks) / MB,
      ...(tracePath ? { job_timeline_ms: jobTimeline(readFileSync(tracePath, 'utf8'), [...jobs.values()]) } : {}),
    };
    return result;
  } catch (error) {
    for (const agent of started) log(`agent ${agent.pid} stderr (last lines):\n${agent.stderr()}`);
    throw error;
  } finally {
    await Promise.all(started.map((agent) => agent.stop()));
    tfe?.close();
    await server?.stop();
    await removeDir();
  }
}

/** An agent's own CPU seconds (user + system) and its waited-for children's (the engine's). */
function agentCpu(pid) {
  const own = cpuSecondsOf(pid) ?? 0;
  return { own, children: childrenCpuSecondsOf(pid) ?? 0 };
}

function childrenCpuSecondsOf(pid) {
  try {
    // cutime and cstime: the 16th and 17th fields, in clock ticks (100 per second on Linux).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
}

/**
 * Where a job's time goes, from the fake engine's trace (`BENCH_ENGINE_TRACE`: a line per command
 * start and end, in ns, with the workspace, whose name holds the job id's first 8 characters) and
 * the job's `claimed_at` and `finished_at`: per job type, the p50 of each step in order, e.g.
 * `claimed → init`, `init`, `init → plan`, …, `show → finished`. A gap between two commands is the
 * agent's work between them (and starting the next process); the last gap is the plan upload, the
 * log's last batch and the status report.
 */
function jobTimeline(text, jobs) {
  const events = new Map();
  for (const line of text.split('\n')) {
    const match = /^(\d+) (start|end) (\S+) .*\/job-([0-9a-f]{8})-/.exec(line);
    if (!match) continue;
    const [, ns, edge, command, prefix] = match;
    if (!events.has(prefix)) events.set(prefix, []);
    events.get(prefix).push({ ms: Number(BigInt(ns) / 1000n) / 1000, edge, command });
  }
  const steps = {};
  for (const job of jobs) {
    const list = (events.get(job.id.slice(0, 8)) ?? []).sort((a, b) => a.ms - b.ms);
    if (list.length === 0) continue;
    if (!steps[job.job_type]) steps[job.job_type] = new Map();
    const byType = steps[job.job_type];
    const add = (name, ms) => {
      if (!byType.has(name)) byType.set(name, []);
      byType.get(name).push(ms);
    };
    let previous = { name: 'claimed', ms: Date.parse(job.claimed_at) };
    for (const event of list) {
      if (event.edge === 'start') add(`${previous.name} → ${event.command}`, event.ms - previous.ms);
      else add(event.command, event.ms - previous.ms);
      previous = { name: event.command, ms: event.ms };
    }
    add(`${previous.name} → finished`, Date.parse(job.finished_at) - previous.ms);
  }
  return Object.fromEntries(
    Object.entries(steps).map(([type, byName]) => [
      type,
      Object.fromEntries([...byName].map(([name, values]) => [name, percentile(values, 50)])),
    ]),
  );
}
