#!/usr/bin/env node
/**
 * `npm run bench:storage`: plan artifacts through the control plane on object storage, per backend
 * (S3 on MinIO, GCS on fake-gcs-server, both from scripts/peers.sh on loopback):
 *
 *   - ten concurrent 50 MiB uploads (POST /api/jobs/{id}/plan-artifact, application/octet-stream,
 *     generated on the fly) and then ten concurrent downloads of them, through a real
 *     `trellis-server` in a child process whose RSS is sampled from /proc every 20 ms;
 *   - beside them, in the same run, the same bytes sent and fetched directly with the vendor SDK
 *     from this process: S3 `Upload` (lib-storage, its defaults) and `GetObject`, GCS `file.save`
 *     and `createReadStream`.
 *
 * Aims (the issue's): within 20% of the direct SDK's MB/s, server RSS growth under 64 MB.
 *
 *   node bench/object-storage.mjs [--quick] [--rounds N (default 3)] [--only s3|gcs] [--out <dir>]
 *
 * Run after `tsc -b` (npm run bench:storage does both): it uses the built packages from dist.
 * It also exports `objectStorage`, a scenario in the shape bench/run.mjs takes
 * ({ name, baselines, run(ctx) } with ctx.quick, ctx.rounds, ctx.only, ctx.log, ctx.record, ctx.skip).
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { Storage } from '@google-cloud/storage';
import { TrellisClient } from '@trellis/client';
import { createControlPlane } from '@trellis/server';

const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const SERVER_BIN = join(REPO_ROOT, 'packages/server/dist/bin/trellis-server.js');
// testkit's index pulls in vitest; these two modules do not.
const { startMinio, startFakeGcs } = await import(join(REPO_ROOT, 'packages/testkit/dist/objectStorage.js'));
const { findPeer } = await import(join(REPO_ROOT, 'packages/testkit/dist/peers.js'));

const UPLOADS = 10;
const PIECE = 1024 * 1024;
const MB = 1e6;
const JWT_SECRET = 'trellis-bench-jwt-secret-of-at-least-32-bytes';
const AIM_RATIO = 0.8;
const AIM_RSS_MB = 64;

const BACKENDS = [
  {
    id: 's3',
    name: 'S3 (MinIO)',
    peer: 'minio',
    start: startMinio,
    direct: s3Direct,
  },
  {
    id: 'gcs',
    name: 'GCS (fake-gcs-server)',
    peer: 'fake-gcs-server',
    start: startFakeGcs,
    direct: gcsDirect,
  },
];

export const objectStorage = {
  name: 'object-storage',
  baselines: {
    'direct SDK':
      'The same bytes sent and fetched directly with the vendor SDK from the bench process, ten at a time: S3 Upload (lib-storage defaults: 5 MiB parts, 4 in flight) and GetObject; GCS file.save (resumable) and createReadStream (validation off, as the store reads). (1 MB = 10^6 bytes.)',
  },
  async run(ctx) {
    ctx = { rounds: ctx.quick ? 1 : 3, ...ctx };
    const size = (ctx.quick ? 4 : 50) * 1024 * 1024;
    const pool = randomBytes(8 * PIECE);
    for (const backend of BACKENDS.filter((b) => !ctx.only || ctx.only.includes(b.id))) {
      const binary = findPeer(backend.peer);
      if (!binary) {
        ctx.skip({
          scenario: 'object-storage',
          dialect: backend.id,
          reason: `${backend.peer} not built (scripts/peers.sh)`,
        });
        continue;
      }
      await runBackend(ctx, backend, binary, pool, size);
    }
  },
};

async function runBackend(ctx, backend, binary, pool, size) {
  const storage = await backend.start(binary);
  const cleanups = [() => storage.stop()];
  try {
    const bucket = await storage.createBucket();
    const env = storage.artifactsEnv(bucket, 'trellis');
    const dataDir = await mkdtemp(join(tmpdir(), 'trellis-bench-storage-'));
    cleanups.unshift(() => rm(dataDir, { recursive: true, force: true }));
    const serverEnv = {
      PORT: '0',
      HOST: '127.0.0.1',
      TRELLIS_DATA_DIR: dataDir,
      DATABASE_URL: `sqlite://${join(dataDir, 'trellis.db')}`,
      TRELLIS_WEB_URL: 'http://127.0.0.1',
      CLI_JWT_SECRET: JWT_SECRET,
      TRELLIS_BOOTSTRAP_TOKEN: 'trellis-bench-bootstrap-token-0123456789',
      TRELLIS_LOG_LEVEL: 'warn',
      ...env,
    };
    const accessToken = await ownerToken(serverEnv);
    const server = await startServer(serverEnv);
    cleanups.unshift(() => server.stop());
    const agents = await claimedPlans(server.url, accessToken);

    // Warm-up (not measured): the first request of each kind loads code and opens connections.
    await upload(server.url, agents[0], pool, 0, PIECE);
    await download(server.url, agents[0]);

    // Rounds alternate the server and the direct SDK, so load from elsewhere on the machine hits
    // both alike; rates are the median over the rounds, RSS growth the highest peak over the RSS
    // the server had before the first round.
    const megabytes = (UPLOADS * size) / MB;
    const rss = sampler(server.pid);
    const rates = { up: [], down: [], directUp: [], directDown: [] };
    for (let round = 0; round < ctx.rounds; round += 1) {
      rss.phase('upload');
      rates.up.push(
        megabytes /
          (await timed(() => Promise.all(agents.map((agent, i) => upload(server.url, agent, pool, i + round, size))))),
      );
      rss.phase('download');
      rates.down.push(megabytes / (await timed(() => Promise.all(agents.map((agent) => download(server.url, agent))))));
      rss.phase(null);
      const direct = await backend.direct(storage, bucket, pool, size, round);
      rates.directUp.push(megabytes / direct.uploadSeconds);
      rates.directDown.push(megabytes / direct.downloadSeconds);
    }
    const growth = rss.stop();
    const up = { rate: median(rates.up), rssGrowth: growth.upload };
    const down = { rate: median(rates.down), rssGrowth: growth.download };
    const direct = { up: median(rates.directUp), down: median(rates.directDown) };

    const rows = [
      ['upload', up.rate, direct.up, up.rssGrowth, rates.up, rates.directUp],
      ['download', down.rate, direct.down, down.rssGrowth, rates.down, rates.directDown],
    ];
    for (const [operation, rate, directRate, rssGrowth, allRates, allDirectRates] of rows) {
      const label = `${backend.name} ${operation} ${UPLOADS}×${size / 1024 / 1024} MiB`;
      ctx.log(
        `  ${label}: ${rate.toFixed(0)} MB/s via trellis-server, ${directRate.toFixed(0)} MB/s direct SDK; ` +
          `server RSS +${(rssGrowth / MB).toFixed(1)} MB`,
      );
      const details = {
        uploads: UPLOADS,
        bytes_each: size,
        operation,
        backend: backend.id,
        rounds: ctx.rounds,
        megabytes_per_second: allRates,
        direct_megabytes_per_second: allDirectRates,
      };
      ctx.record(
        figure({
          scenario: 'object-storage',
          dialect: backend.id,
          label,
          metric: 'throughput',
          unit: 'MB/s',
          value: rate,
          baseline: { name: 'direct SDK', value: directRate },
          better: 'higher',
          aim: { kind: 'ratio_at_least', target: AIM_RATIO, text: `≥ ${AIM_RATIO}× direct SDK` },
          details,
        }),
      );
      ctx.record(
        figure({
          scenario: 'object-storage',
          dialect: backend.id,
          label,
          metric: 'server peak RSS growth',
          unit: 'MB',
          value: rssGrowth / MB,
          baseline: null,
          better: 'lower',
          aim: { kind: 'value_below', target: AIM_RSS_MB, text: `< ${AIM_RSS_MB} MB` },
          details,
        }),
      );
    }
  } finally {
    for (const cleanup of cleanups) await cleanup().catch((error) => ctx.log(`  cleanup failed: ${error.message}`));
  }
}

/**
 * Samples the server's RSS every 20 ms from now on; the growth of each phase is its highest
 * sample over the RSS at the start (so buffers kept from an earlier round count once, where they
 * first appear).
 */
function sampler(pid) {
  const first = rssOf(pid);
  const peaks = {};
  let phase = null;
  const sample = () => {
    const rss = rssOf(pid);
    if (phase !== null && rss !== null) peaks[phase] = Math.max(peaks[phase] ?? first, rss);
  };
  const timer = setInterval(sample, 20);
  return {
    phase(name) {
      sample();
      phase = name;
    },
    stop() {
      sample();
      clearInterval(timer);
      return Object.fromEntries(Object.entries(peaks).map(([name, peak]) => [name, peak - first]));
    },
  };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function rssOf(pid) {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Migrates the database and signs a user in (device login) with an in-process control plane. */
async function ownerToken(env) {
  const controlPlane = await createControlPlane({ env });
  try {
    const { auth } = controlPlane.useCases;
    const user = await auth.ensureUser({ email: 'bench@example.com' });
    const deviceCode = randomUUID();
    const { verification_code } = await auth.generateCliLogin({ userId: user.id, email: user.email }, deviceCode);
    const { access_token } = await auth.exchangeCliLogin({ device_code: deviceCode, verification_code });
    return access_token;
  } finally {
    await controlPlane.close();
  }
}

/** `trellis-server` in a child process; resolves with its URL once it says it listens. */
async function startServer(env) {
  const child = spawn(process.execPath, [SERVER_BIN], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => {
    stderr = (stderr + text).slice(-4000);
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = await new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`trellis-server did not start:\n${stderr}`)), 30_000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text) => {
      stdout += text;
      const match = /listening on (http:\/\/\S+)\r?\n/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    exited.then(() => reject(new Error(`trellis-server exited:\n${stderr}`)));
  });
  return {
    url,
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(force);
    },
  };
}

/** Ten agents, each with a PLAN job of its own vine claimed (uploads are only for running jobs). */
async function claimedPlans(url, accessToken) {
  const user = new TrellisClient({ baseUrl: url, auth: { kind: 'bearer', accessToken: () => accessToken } });
  const vineyard = await user.createVineyard('bench-storage');
  const agents = [];
  for (let i = 0; i < UPLOADS; i += 1) {
    const configuration = await user.createConfiguration({
      name: `bench-storage-${i}`,
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': 'output "n" {\n  value = 1\n}\n' } },
    });
    const { worker_id, worker_token } = await user.registerAgent({ name: `bench-storage-agent-${i}` });
    const agent = new TrellisClient({
      baseUrl: url,
      auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
    });
    await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const claimed = await agent.claimJob();
    agents.push({ workerId: worker_id, workerToken: worker_token, jobId: claimed.job.id });
  }
  return agents;
}

/** The bytes of upload `index`: the noise pool's pieces in an order of its own. */
function* generated(pool, index, size) {
  const pieces = pool.length / PIECE;
  for (let offset = 0, n = 0; offset < size; offset += PIECE, n += 1) {
    const start = ((n * 7 + index * 3) % pieces) * PIECE;
    yield pool.subarray(start, start + Math.min(PIECE, size - offset));
  }
}

async function upload(url, agent, pool, index, size) {
  const target = new URL(`/api/jobs/${agent.jobId}/plan-artifact`, url);
  await new Promise((resolve, reject) => {
    const req = request(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/octet-stream',
        'content-length': String(size),
        'x-worker-id': agent.workerId,
        'x-worker-token': agent.workerToken,
      },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (text) => {
        body += text;
      });
      res.on('end', () =>
        res.statusCode === 201 ? resolve() : reject(new Error(`upload: ${res.statusCode} ${body}`)),
      );
    });
    req.on('error', reject);
    pipeline(Readable.from(generated(pool, index, size)), req).catch(reject);
  });
}

async function download(url, agent) {
  const target = new URL(`/api/jobs/${agent.jobId}/plan-artifact`, url);
  return new Promise((resolve, reject) => {
    const req = request(target, {
      headers: { 'x-worker-id': agent.workerId, 'x-worker-token': agent.workerToken },
    });
    req.on('response', (res) => {
      let received = 0;
      res.on('data', (chunk) => {
        received += chunk.length;
      });
      res.on('end', () => {
        const expected = Number(res.headers['content-length']);
        if (res.statusCode !== 200 || received !== expected) {
          reject(new Error(`download: ${res.statusCode}, ${received} of ${expected} bytes`));
        } else resolve(received);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Whole buffers for the SDKs (built before the clock starts, so they do not pay for generation). */
function buffersOf(pool, size, round) {
  return Array.from({ length: UPLOADS }, (_, i) => Buffer.concat([...generated(pool, i + round, size)]));
}

/** Seconds `work` takes. */
async function timed(work) {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function s3Direct(minio, bucket, pool, size, round) {
  const client = new S3Client({
    region: minio.region,
    endpoint: minio.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
  });
  try {
    const bodies = buffersOf(pool, size, round);
    const key = (i) => `direct/${round}/${i}`;
    const uploadSeconds = await timed(() =>
      Promise.all(
        bodies.map((Body, i) => new Upload({ client, params: { Bucket: bucket, Key: key(i), Body } }).done()),
      ),
    );
    bodies.length = 0;
    const downloadSeconds = await timed(() =>
      Promise.all(
        Array.from({ length: UPLOADS }, async (_, i) => {
          const { Body } = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key(i) }));
          for await (const _chunk of Body) {
            // consumed
          }
        }),
      ),
    );
    return { uploadSeconds, downloadSeconds };
  } finally {
    client.destroy();
  }
}

async function gcsDirect(gcs, bucketName, pool, size, round) {
  const bucket = new Storage({ apiEndpoint: gcs.endpoint, projectId: 'trellis-bench' }).bucket(bucketName);
  const bodies = buffersOf(pool, size, round);
  const file = (i) => bucket.file(`direct/${round}/${i}`);
  const uploadSeconds = await timed(() =>
    Promise.all(bodies.map((body, i) => file(i).save(body, { contentType: 'application/octet-stream' }))),
  );
  bodies.length = 0;
  const downloadSeconds = await timed(() =>
    Promise.all(
      Array.from({ length: UPLOADS }, async (_, i) => {
        for await (const _chunk of file(i).createReadStream({ validation: false })) {
          // consumed
        }
      }),
    ),
  );
  return { uploadSeconds, downloadSeconds };
}

/** The figure shape of bench/lib/report.mjs. */
function figure({ scenario, dialect, label, metric, unit, value, baseline, better, aim, details }) {
  const ratio = baseline && baseline.value > 0 ? value / baseline.value : null;
  let met = null;
  if (aim?.kind === 'ratio_at_least') met = ratio !== null && ratio >= aim.target;
  if (aim?.kind === 'value_below') met = value < aim.target;
  return { scenario, dialect, label, metric, unit, value, baseline, ratio, better, aim: { ...aim, met }, details };
}

function renderTable(results) {
  const rows = results.map((r) => [
    r.label,
    `${r.metric} (${r.unit})`,
    r.value.toFixed(1),
    r.baseline ? r.baseline.value.toFixed(1) : '—',
    r.ratio === null ? '—' : `${r.ratio.toFixed(2)}×`,
    r.aim.text,
    r.aim.met ? '✓' : '✗',
  ]);
  const header = ['scenario', 'metric', 'value', 'direct SDK', 'ratio', 'aim', ''];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => [...row[c]].length)));
  const line = (cells) => cells.map((cell, c) => cell.padEnd(widths[c])).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

async function main() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      only: { type: 'string' },
      out: { type: 'string', default: join(REPO_ROOT, 'bench-results') },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write('Usage: node bench/object-storage.mjs [--quick] [--rounds N] [--only s3|gcs] [--out <dir>]\n');
    return;
  }
  const results = [];
  const skipped = [];
  const ctx = {
    quick: values.quick,
    rounds: values.rounds ? Number(values.rounds) : values.quick ? 1 : 3,
    only: values.only ? values.only.split(',') : undefined,
    log: (text) => process.stdout.write(`${text}\n`),
    record: (result) => results.push(result),
    skip: (entry) => {
      skipped.push(entry);
      process.stderr.write(`!! SKIPPED ${entry.dialect}: ${entry.reason}\n`);
    },
  };
  process.stdout.write(
    `object storage bench on ${cpus().length} cores, load average ${loadavg()[0].toFixed(2)} before the run${values.quick ? ' (--quick: not a measurement)' : ''}\n`,
  );
  await objectStorage.run(ctx);
  process.stdout.write(`\n${renderTable(results)}\n`);
  await mkdir(values.out, { recursive: true });
  const json = JSON.stringify({ at: new Date().toISOString(), loadavg: loadavg(), results, skipped }, null, 2);
  await writeFile(join(values.out, 'object-storage-latest.json'), `${json}\n`);
  process.stdout.write(`\nJSON: ${join(values.out, 'object-storage-latest.json')}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exitCode = 1;
  });
}
