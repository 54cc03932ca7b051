/**
 * Ten concurrent 50 MiB plan-artifact uploads: real PLAN jobs claimed over HTTP by ten agents,
 * each streaming an application/octet-stream body generated on the fly (never held whole in the
 * client) into the filesystem artifact store. Throughput is compared with a plain copy of the same
 * bytes (ten concurrent stream pipes in a child process), and the server's peak RSS growth during
 * the uploads (sampled from /proc every 20 ms) with the copying process's.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { deferCleanup } from '../lib/cleanup.mjs';
import { withFreshDatabase } from '../lib/databases.mjs';
import { CHILDREN_DIR, childEnv } from '../lib/environment.mjs';
import { cpuSecondsOf, sampleRss, startBareServer, startControlPlaneProcess } from '../lib/processes.mjs';
import { aims, figure } from '../lib/report.mjs';
import { agentClient, createOwner, queuePlanJobs, registerAgents, withUseCases } from '../lib/setup.mjs';

const UPLOADS = 10;
/**
 * The generator hands fetch 1 MiB at a time: with 64 KiB pieces fetch's streamed request body
 * tops out near 100 MB/s here and the client, not the server, would be measured.
 */
const PIECE = 1024 * 1024;
const MB = 1e6;

export const uploads = {
  name: 'uploads',
  baselines: {
    'plain file copy':
      "The same bytes copied file to file: ten concurrent stream pipes (createReadStream → write stream, fsync before close, as the artifact store does) in a child process; its RSS growth is sampled the same way as the server's. The source files are written beforehand and sit in the page cache. (1 MB = 10^6 bytes.)",
  },

  async run(ctx) {
    const size = (ctx.quick ? 4 : 50) * 1024 * 1024;
    // The artifact store is the filesystem whatever the database; SQLite keeps the run lean.
    const dialect = ctx.dialects.includes('sqlite') ? 'sqlite' : ctx.dialects[0];
    if (!dialect) return ctx.skip({ scenario: 'uploads', dialect: null, reason: 'no database available' });
    const pool = randomBytes(8 * PIECE); // 8 MiB of noise, its pieces in a different order per file
    const scratch = await mkdtemp(join(tmpdir(), 'trellis-bench-uploads-'));
    const removeScratch = deferCleanup(() => rm(scratch, { recursive: true, force: true }));
    try {
      const http = await withFreshDatabase(dialect, (url) => uploadOverHttp(url, pool, size));
      const copy = await copyFiles(scratch, pool, size);
      // A reference in the JSON: the same uploads into a bare node:http sink show what this
      // client can send at all.
      const clientCeiling = await uploadToBareSink(pool, size);
      const megabytes = (UPLOADS * size) / MB;
      const httpRate = megabytes / http.seconds;
      const copyRate = megabytes / copy.seconds;
      ctx.log(
        `  ${UPLOADS} × ${size / 1024 / 1024} MiB: ${httpRate.toFixed(0)} MB/s over HTTP, copy ${copyRate.toFixed(0)} MB/s, ` +
          `into a bare sink ${(megabytes / clientCeiling.seconds).toFixed(0)} MB/s; ` +
          `server busy ${((100 * http.serverCpuSeconds) / http.seconds).toFixed(0)}% of one core; ` +
          `server RSS +${(http.rssGrowth / MB).toFixed(1)} MB, copy +${(copy.rssGrowth / MB).toFixed(1)} MB`,
      );
      const details = {
        uploads: UPLOADS,
        bytes_each: size,
        dialect,
        http,
        copy,
        bare_sink_megabytes_per_second: megabytes / clientCeiling.seconds,
      };
      ctx.record(
        figure({
          scenario: 'uploads',
          dialect,
          label: `plan uploads ${UPLOADS}×${size / 1024 / 1024} MiB`,
          metric: 'throughput',
          unit: 'MB/s',
          value: httpRate,
          baseline: { name: 'plain file copy', value: copyRate },
          better: 'higher',
          aim: aims.ratioAtLeast(0.5, '≥ 0.5× baseline'),
          details,
        }),
      );
      ctx.record(
        figure({
          scenario: 'uploads',
          dialect,
          label: `plan uploads ${UPLOADS}×${size / 1024 / 1024} MiB`,
          metric: 'server peak RSS growth',
          unit: 'MB',
          value: http.rssGrowth / MB,
          baseline: { name: 'plain file copy', value: copy.rssGrowth / MB },
          better: 'lower',
          aim: aims.valueBelow(64, '< 64 MB'),
          details,
        }),
      );
    } finally {
      await removeScratch();
    }
  },
};

/** The bytes of file `index`: the noise pool's pieces in an order of its own. */
function* generated(pool, index, size) {
  const pieces = pool.length / PIECE;
  for (let offset = 0, n = 0; offset < size; offset += PIECE, n += 1) {
    const start = ((n * 7 + index * 3) % pieces) * PIECE;
    yield pool.subarray(start, start + Math.min(PIECE, size - offset));
  }
}

/** A pull stream: the next piece is made only when fetch asks for it. */
function bodyOf(pool, index, size) {
  const pieces = generated(pool, index, size);
  return new ReadableStream({
    pull(controller) {
      const { value, done } = pieces.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
  });
}

async function uploadOverHttp(databaseUrl, pool, size) {
  const setup = await withUseCases(databaseUrl, async (useCases) => {
    const owner = await createOwner(useCases);
    const agents = await registerAgents(useCases, owner, UPLOADS);
    await queuePlanJobs(useCases, owner, UPLOADS, { prefix: 'uploads' });
    return { agents };
  });
  const server = await startControlPlaneProcess(databaseUrl);
  try {
    const clients = setup.agents.map((agent) => agentClient(server.url, agent));
    const jobs = await Promise.all(clients.map((client) => client.claimJob()));
    if (jobs.some((claimed) => claimed?.job.job_type !== 'PLAN'))
      throw new Error('every agent should claim a PLAN job');
    // Let start-up garbage settle so the growth is the uploads' own.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const sampler = sampleRss(server.pid, 20);
    const cpuBefore = cpuSecondsOf(server.pid);
    const begin = performance.now();
    const answers = await Promise.all(
      clients.map((client, index) => client.uploadPlanArtifact(jobs[index].job.id, bodyOf(pool, index, size), size)),
    );
    const seconds = (performance.now() - begin) / 1000;
    const serverCpuSeconds = cpuSecondsOf(server.pid) - cpuBefore;
    const rss = sampler.stop();
    if (answers.some((answer) => answer.size !== size)) throw new Error('an upload was stored with the wrong size');
    return {
      seconds,
      serverCpuSeconds,
      rssBefore: rss.first,
      rssPeak: rss.peak,
      rssGrowth: rss.peak - rss.first,
      rssSamples: rss.samples,
    };
  } finally {
    await server.stop();
  }
}

async function uploadToBareSink(pool, size) {
  const bare = await startBareServer();
  try {
    const clients = Array.from({ length: UPLOADS }, (_, index) =>
      agentClient(bare.url, { workerId: `bench-${index}`, workerToken: 'unused' }),
    );
    const begin = performance.now();
    await Promise.all(
      clients.map((client, index) => client.uploadPlanArtifact(`sink-${index}`, bodyOf(pool, index, size), size)),
    );
    return { seconds: (performance.now() - begin) / 1000 };
  } finally {
    await bare.stop();
  }
}

async function copyFiles(scratch, pool, size) {
  const args = [];
  for (let index = 0; index < UPLOADS; index += 1) {
    const source = join(scratch, `source-${index}`);
    await pipeline(Readable.from(generated(pool, index, size)), createWriteStream(source));
    args.push(source, join(scratch, `copy-${index}`));
  }
  const child = fork(join(CHILDREN_DIR, 'copy-files.mjs'), args, {
    env: childEnv(),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = once(child, 'exit');
  const stop = deferCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  try {
    const [ready] = await once(child, 'message');
    if (ready !== 'ready') throw new Error(`copy child said ${ready}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const sampler = sampleRss(child.pid, 20);
    const done = once(child, 'message');
    child.send('go');
    const [{ seconds, bytes }] = await done;
    const rss = sampler.stop();
    if (bytes !== UPLOADS * size) throw new Error(`copied ${bytes} bytes, expected ${UPLOADS * size}`);
    return {
      seconds,
      rssBefore: rss.first,
      rssPeak: rss.peak,
      rssGrowth: rss.peak - rss.first,
      rssSamples: rss.samples,
    };
  } finally {
    await stop();
  }
}
