#!/usr/bin/env node
/**
 * `npm run bench:agent`: the agent's two figures, each beside a baseline measured in the same run.
 *
 *   1. Engine output through the agent: an engine (bench/agent-fake-engine.mjs, standing in for
 *      `tofu`) prints 100 MB of log lines during `plan`; the real `trellis-agent` reads, redacts,
 *      batches and posts them to a real `trellis-server` (SQLite, loopback). Reported: MB/s from
 *      the engine's first byte until the job is SUCCESS (every chunk stored), requests per MB, the
 *      agent's peak RSS (sampled from /proc every 20 ms) beside its idle RSS, and a check that the
 *      stored log holds exactly the bytes printed. Baseline: the same engine process writing the
 *      same bytes to /dev/null.
 *   2. Dispatch latency: a job created while the agent idles in its long-poll claim, until the
 *      control plane hands it over (`claimed_at - created_at`), p50/p99. Baseline: a claim of a
 *      job that was already queued, timed by the client.
 *
 *   node bench/agent.mjs [--quick] [--out <dir>]
 *
 * Run after `tsc -b` (npm run bench:agent does both): it uses the built packages from dist. It also
 * exports `agentBench({ quick })`, which returns the figures, for bench/run.mjs.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { TrellisClient } from '@trellis/client';

const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const SERVER_BIN = join(REPO_ROOT, 'packages/server/dist/bin/trellis-server.js');
const AGENT_BIN = join(REPO_ROOT, 'packages/agent/dist/bin/trellis-agent.js');
const FAKE_ENGINE = join(REPO_ROOT, 'bench/agent-fake-engine.mjs');
const MB = 1e6;
const BOOTSTRAP_TOKEN = 'trellis-agent-bench-bootstrap-0123456789';

function startChild(bin, args, env) {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (data) => {
    output += data;
  });
  child.stderr.on('data', (data) => {
    output += data;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function startServer(dataDir) {
  const server = startChild(SERVER_BIN, [], {
    PORT: '0',
    HOST: '127.0.0.1',
    TRELLIS_DATA_DIR: dataDir,
    CLI_JWT_SECRET: 'trellis-agent-bench-jwt-secret-at-least-32-bytes',
    TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
    TRELLIS_LOG_LEVEL: 'warn',
    // 100 MB of output in one job: above the default 64 MiB cap, which would cut the log.
    TRELLIS_MAX_LOG_BYTES_PER_JOB: String(1024 * 1024 * 1024),
  });
  for (let i = 0; i < 300; i++) {
    const match = /listening on (http:\/\/\S+)/.exec(server.output());
    if (match) return { ...server, url: match[1] };
    await sleep(100);
  }
  throw new Error(`trellis-server did not start:\n${server.output()}`);
}

async function login(url) {
  const bootstrap = await fetch(`${url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`, { redirect: 'manual' });
  const cookie = (bootstrap.headers.get('set-cookie') ?? '').split(';')[0];
  const web = new TrellisClient({ baseUrl: url, auth: { kind: 'cookie', cookie, origin: new URL(url).origin } });
  const deviceCode = crypto.randomUUID();
  const { verification_code } = await web.generateCliLogin(deviceCode);
  const { access_token } = await web.exchangeCliLogin({ device_code: deviceCode, verification_code });
  return new TrellisClient({ baseUrl: url, auth: { kind: 'bearer', accessToken: () => access_token } });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** User + system CPU seconds of a process so far. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

function rssMb(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

async function waitForJob(user, id, timeoutMs = 600_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await user.getJob(id);
    if (['SUCCESS', 'FAILED', 'CANCELLED'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} did not end`);
    await sleep(20);
  }
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The engine alone, writing `bytes` to /dev/null: the same process and code path, no agent. */
async function baselineDevNull(bytes, dir) {
  const timing = join(dir, 'devnull-timing.json');
  const devNull = openSync('/dev/null', 'w');
  const child = spawn(process.execPath, [FAKE_ENGINE, 'plan', `-out=${join(dir, 'devnull.plan')}`], {
    env: { ...process.env, TF_VAR_bytes: String(bytes), TF_VAR_timing: timing },
    stdio: ['ignore', devNull, 'inherit'],
  });
  await new Promise((resolve) => child.once('exit', resolve));
  const { started, ended } = JSON.parse(readFileSync(timing, 'utf8'));
  return bytes / MB / ((ended - started) / 1000);
}

async function storedStdoutBytes(user, jobId) {
  let after = 0;
  let bytes = 0;
  for (;;) {
    const page = await user.getJobLogs(jobId, { after, limit: 5000 });
    for (const chunk of page.logs) if (chunk.stream_type === 'STDOUT') bytes += Buffer.byteLength(chunk.log_chunk);
    after = page.logs.at(-1)?.id ?? after;
    if (!page.has_more) return bytes;
  }
}

/**
 * The control plane's batched log ingest, in MB/s: `bytes` of the same kind of lines posted by a
 * worker client straight to a claimed job, in batches as the agent makes them (8 chunks of 256 KiB,
 * 3 batches in flight), timed from the first post until the last is answered.
 */
async function batchedIngest(user, url, vine, bytes) {
  const registration = await user.registerAgent({ name: 'bench-ingest' });
  const worker = new TrellisClient({
    baseUrl: url,
    auth: { kind: 'worker', workerId: registration.worker_id, workerToken: registration.worker_token },
  });
  const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
  const claimed = await worker.claimJob();
  if (claimed?.job.id !== job.id) throw new Error('the ingest baseline claimed another job');
  const chunkBytes = 256 * 1024;
  const line = 'aws_instance.web[0]: Still creating... [10s elapsed] (bench log line)\n';
  const chunk = line.repeat(Math.ceil(chunkBytes / line.length)).slice(0, chunkBytes);
  const chunks = Math.ceil(bytes / chunkBytes);
  const perBatch = 8;
  let nextSeq = 1;
  const t0 = performance.now();
  const lane = async () => {
    while (nextSeq <= chunks) {
      const first = nextSeq;
      const last = Math.min(chunks, first + perBatch - 1);
      nextSeq = last + 1;
      const batch = [];
      for (let seq = first; seq <= last; seq++) batch.push({ seq, log_chunk: chunk, stream_type: 'STDOUT' });
      // A batch that overtook the one before it is refused (log_seq_gap): post it again.
      for (;;) {
        try {
          await worker.appendLogBatch(job.id, batch);
          break;
        } catch (error) {
          if (error?.code !== 'log_seq_gap') throw error;
          await sleep(1);
        }
      }
    }
  };
  await Promise.all([lane(), lane(), lane()]);
  const seconds = (performance.now() - t0) / 1000;
  await worker.reportStatus(job.id, { status: 'SUCCESS' });
  return (chunks * chunkBytes) / MB / seconds;
}

export async function agentBench({ quick = false, log = console.log } = {}) {
  const bytes = quick ? 20 * MB : 100 * MB;
  const dispatchJobs = quick ? 20 : 100;
  const dir = mkdtempSync(join(tmpdir(), 'trellis-agent-bench-'));
  const server = await startServer(join(dir, 'server'));
  let agent = null;
  try {
    const user = await login(server.url);
    const vineyard = await user.createVineyard('bench');
    const vineOf = (name, variables) =>
      user.createConfiguration({
        name,
        vineyard_id: vineyard.id,
        source: { type: 'inline', files: { 'main.tf': '# the fake engine reads TF_VAR_bytes\n' } },
        variables,
      });
    const registration = await user.registerAgent({ name: 'bench-agent' });
    agent = startChild(AGENT_BIN, ['run', '--work-dir', join(dir, 'work'), '--log-level', 'info'], {
      TRELLIS_URL: server.url,
      TRELLIS_WORKER_ID: registration.worker_id,
      TRELLIS_WORKER_TOKEN: registration.worker_token,
      TRELLIS_ENGINE_BIN: FAKE_ENGINE,
      // e.g. BENCH_AGENT_NODE_OPTIONS=--max-old-space-size=48 to see the live set rather than lazy GC.
      ...(process.env.BENCH_AGENT_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_AGENT_NODE_OPTIONS } : {}),
    });
    await sleep(500);
    const idleRss = rssMb(agent.child.pid);

    // 1. 100 MB of engine output through the agent.
    log(`engine output: ${bytes / MB} MB through the agent…`);
    const timing = join(dir, 'agent-timing.json');
    const big = await vineOf('big-output', { bytes: String(bytes), timing });
    let peakRss = idleRss ?? 0;
    const sampler = setInterval(() => {
      const rss = rssMb(agent.child.pid);
      if (rss !== null && rss > peakRss) peakRss = rss;
    }, 20);
    const cpuBefore = { agent: cpuSeconds(agent.child.pid), server: cpuSeconds(server.child.pid) };
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: big.id });
    const done = await waitForJob(user, job.id);
    const finished = Date.now();
    clearInterval(sampler);
    const agentCpu = cpuSeconds(agent.child.pid) - cpuBefore.agent;
    const serverCpu = cpuSeconds(server.child.pid) - cpuBefore.server;
    if (done.status !== 'SUCCESS') throw new Error(`the output job ended ${done.status}: ${done.error_message}`);
    const { started, ended: engineEnded } = JSON.parse(readFileSync(timing, 'utf8'));
    const seconds = (finished - started) / 1000;
    const stored = await storedStdoutBytes(user, job.id);
    const ended = agent
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"job ended"'))
      .map((line) => JSON.parse(line))
      .find((entry) => entry.job_id === job.id);
    const throughput = bytes / MB / seconds;
    const baseline = await baselineDevNull(bytes, dir);

    // 2. Dispatch latency to an idle, long-polling agent.
    log(`dispatch: ${dispatchJobs} jobs to an idle agent…`);
    const tiny = await vineOf('tiny', { bytes: '0' });
    const latencies = [];
    for (let i = 0; i < dispatchJobs; i++) {
      await sleep(50 + Math.random() * 100); // the agent is back in its long poll
      const created = await user.createJob({ job_type: 'PLAN', configuration_id: tiny.id });
      const finishedJob = await waitForJob(user, created.id);
      latencies.push(Date.parse(finishedJob.claimed_at) - Date.parse(finishedJob.created_at));
    }
    await agent.stop();
    agent = null;
    // Baseline of 1.: the control plane's batched ingest of the same bytes, posted straight.
    log(`batched ingest: ${bytes / MB} MB posted straight to the control plane…`);
    const ingest = await batchedIngest(user, server.url, await vineOf('ingest', { bytes: '0' }), bytes);
    // Baseline: claims of jobs already queued, by a second worker, timed by the client.
    const direct = await user.registerAgent({ name: 'bench-direct' });
    const worker = new TrellisClient({
      baseUrl: server.url,
      auth: { kind: 'worker', workerId: direct.worker_id, workerToken: direct.worker_token },
    });
    const claimTimes = [];
    for (let i = 0; i < dispatchJobs; i++) {
      const queued = await user.createJob({ job_type: 'PLAN', configuration_id: tiny.id });
      const t0 = performance.now();
      const claimed = await worker.claimJob();
      claimTimes.push(performance.now() - t0);
      if (claimed?.job.id !== queued.id) throw new Error('baseline claim got another job');
      await worker.reportStatus(queued.id, { status: 'SUCCESS' });
    }

    return {
      machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
      engine_output: {
        bytes,
        stored_stdout_bytes: stored,
        complete: stored === bytes,
        mb_per_s: throughput,
        baseline_dev_null_mb_per_s: baseline,
        ratio: throughput / baseline,
        batched_ingest_mb_per_s: ingest,
        ratio_to_batched_ingest: throughput / ingest,
        aim_ratio_to_batched_ingest: 0.5,
        aim_met: throughput / ingest >= 0.5,
        engine_write_seconds: (engineEnded - started) / 1000,
        seconds_until_success: seconds,
        log_requests: ended?.log_requests ?? null,
        requests_per_mb: ended ? ended.log_requests / (ended.shipped_bytes / MB) : null,
        agent_cpu_seconds: agentCpu,
        server_cpu_seconds: serverCpu,
        agent_rss_idle_mb: idleRss,
        agent_rss_peak_mb: peakRss,
      },
      dispatch: {
        jobs: dispatchJobs,
        p50_ms: percentile(latencies, 50),
        p99_ms: percentile(latencies, 99),
        baseline_queued_claim_p50_ms: percentile(claimTimes, 50),
        baseline_queued_claim_p99_ms: percentile(claimTimes, 99),
      },
    };
  } finally {
    await agent?.stop();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function table(result) {
  const e = result.engine_output;
  const d = result.dispatch;
  const f = (value, digits = 1) => (value === null || value === undefined ? '—' : Number(value).toFixed(digits));
  return [
    `| figure | value | baseline | ratio |`,
    `|---|---|---|---|`,
    `| engine output through the agent (${e.bytes / MB} MB) | ${f(e.mb_per_s)} MB/s | ${f(e.baseline_dev_null_mb_per_s)} MB/s to /dev/null | ${f(e.ratio, 3)} |`,
    `| engine output through the agent vs batched ingest | ${f(e.mb_per_s)} MB/s | ${f(e.batched_ingest_mb_per_s)} MB/s posted straight in batches | ${f(e.ratio_to_batched_ingest, 2)} (aim ≥ 0.5 ${e.aim_met ? '✓' : '✗'}) |`,
    `| log requests per MB | ${f(e.requests_per_mb, 2)} | — | — |`,
    `| CPU during the transfer | agent ${f(e.agent_cpu_seconds)} s, server ${f(e.server_cpu_seconds)} s | ${f(e.seconds_until_success)} s wall | — |`,
    `| agent RSS while shipping | ${f(e.agent_rss_peak_mb)} MB peak | ${f(e.agent_rss_idle_mb)} MB idle | ${f(e.agent_rss_peak_mb / e.agent_rss_idle_mb, 2)} |`,
    `| stored log complete | ${e.complete ? 'yes' : `NO (${e.stored_stdout_bytes} of ${e.bytes} bytes)`} | | |`,
    `| dispatch latency p50 (${d.jobs} jobs) | ${f(d.p50_ms)} ms | ${f(d.baseline_queued_claim_p50_ms)} ms queued claim | ${f(d.p50_ms / d.baseline_queued_claim_p50_ms, 2)} |`,
    `| dispatch latency p99 | ${f(d.p99_ms)} ms | ${f(d.baseline_queued_claim_p99_ms)} ms queued claim | ${f(d.p99_ms / d.baseline_queued_claim_p99_ms, 2)} |`,
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { quick: { type: 'boolean' }, out: { type: 'string' } } });
  const result = await agentBench({ quick: values.quick === true, log: (line) => process.stderr.write(`${line}\n`) });
  console.log(table(result));
  const out = values.out ?? join(REPO_ROOT, 'bench-results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'agent.json'), `${JSON.stringify({ at: new Date().toISOString(), ...result }, null, 2)}\n`);
  console.log(`\nwritten to ${join(out, 'agent.json')}`);
}
