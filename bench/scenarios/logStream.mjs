/**
 * Publish-to-receive latency of live logs (DESIGN §6): 1,000 readers (20 with --quick) follow one running job's
 * `GET /api/jobs/{id}/logs/stream` while its agent posts chunks at a steady, modest rate. Each
 * chunk carries its send time; every reader notes, per chunk, receive time − send time. Publisher
 * and readers share this process's monotonic clock; the server is another process.
 *
 * The baseline is the same readers and publisher against a bare node:http fan-out (the chunk is
 * written to every open response as the POST arrives): the floor that HTTP, SSE parsing and this
 * load generator set, without storing the chunk or reading it back as the real stream does.
 */
import { preparedDatabase } from '../lib/databases.mjs';
import { percentile, sleep } from '../lib/load.mjs';
import { startBareServer, startControlPlaneProcess } from '../lib/processes.mjs';
import { aims, figure } from '../lib/report.mjs';
import {
  agentClient,
  claimFor,
  createOwner,
  queuePlanJobs,
  registerAgents,
  userClient,
  withUseCases,
} from '../lib/setup.mjs';

const SUBSCRIBERS = 1000;
const QUICK_SUBSCRIBERS = 20;
const READY_TIMEOUT_MS = 60_000;
const DRAIN_TIMEOUT_MS = 10_000;

export const logStream = {
  name: 'sse',
  baselines: {
    'bare node:http fan-out':
      'The same 1,000 SSE readers (TrellisClient.streamJobLogs) and the same publisher against a node:http server in its own process that writes each posted chunk to every open stream at once: no database write or read, no authentication.',
  },

  async run(ctx) {
    const chunks = ctx.quick ? 10 : 60;
    const subscribers = ctx.quick ? QUICK_SUBSCRIBERS : SUBSCRIBERS;
    // The readers are one user's, on one job: the per-user and per-job caps on open streams are
    // raised to let them all in (the fan-out is what is measured, not the caps).
    const caps = { TRELLIS_STREAMS_PER_USER: String(subscribers), TRELLIS_STREAMS_PER_JOB: String(subscribers) };
    // 10 chunks/s: ten times what one agent sends (DESIGN §7: about one a second), yet modest. Much
    // slower and the machine's own wake-up latency after idling dominates both figures (a loopback
    // round trip after 500 ms idle takes ~40 ms on a small VM, ~2 ms back to back).
    const intervalMs = 100;
    for (const dialect of ctx.dialects) {
      const database = await preparedDatabase(dialect, (url) =>
        withUseCases(url, async (useCases) => {
          const owner = await createOwner(useCases);
          const [agent] = await registerAgents(useCases, owner, 1, 'publisher');
          await queuePlanJobs(useCases, owner, 1, { prefix: 'sse' });
          agent.jobId = (await claimFor(useCases, agent)).id;
          return { owner, agent };
        }),
      );
      try {
        const { owner, agent } = database.prepared;
        const plan = { chunks, intervalMs, subscribers };
        const trellis = await database.withClone(async (url) => {
          const server = await startControlPlaneProcess(url, { env: caps });
          try {
            const readers = userClient(server.url, owner);
            return await measureFanOut(readers, agentClient(server.url, agent), agent.jobId, plan);
          } finally {
            await server.stop();
          }
        });
        const bare = await startBareServer();
        let baseline;
        try {
          // The same clients; the bare server ignores their credentials.
          baseline = await measureFanOut(userClient(bare.url, owner), agentClient(bare.url, agent), agent.jobId, plan);
        } finally {
          await bare.stop();
        }
        ctx.log(
          `  ${dialect}: p50 ${trellis.p50.toFixed(1)} ms, p99 ${trellis.p99.toFixed(1)} ms ` +
            `(bare ${baseline.p50.toFixed(1)} / ${baseline.p99.toFixed(1)} ms), ${trellis.missing} missing; ` +
            `log post p50 ${trellis.post_p50_ms.toFixed(1)} ms (bare ${baseline.post_p50_ms.toFixed(1)} ms)`,
        );
        const details = { subscribers, chunks, interval_ms: intervalMs, trellis, bare: baseline };
        for (const [metric, key] of [
          ['latency p50', 'p50'],
          ['latency p99', 'p99'],
        ]) {
          ctx.record(
            figure({
              scenario: 'sse',
              dialect,
              label: `log stream ${dialect} ×${subscribers}`,
              metric,
              unit: 'ms',
              value: trellis[key],
              baseline: { name: 'bare node:http fan-out', value: baseline[key] },
              better: 'lower',
              aim: key === 'p99' ? aims.valueBelow(100, 'p99 < 100 ms') : null,
              details,
            }),
          );
        }
      } finally {
        await database.drop();
      }
    }
  },
};

/**
 * Opens the readers, waits until each is live, publishes on a fixed schedule, and collects every
 * latency. Posts go out on schedule whether or not the previous one has been answered (open
 * loop), so a slow server shows up as latency instead of quietly slowing the publisher down. A
 * chunk some reader never got counts at the time the wait for it was given up: a lower bound.
 */
async function measureFanOut(reader, publisher, jobId, { chunks, intervalMs, subscribers }) {
  const abort = new AbortController();
  const latencies = [];
  const sentAt = new Float64Array(chunks);
  const readersOf = new Uint16Array(chunks);
  let ready = 0;
  let received = 0;
  let signalReady;
  const allReady = new Promise((resolve) => {
    signalReady = resolve;
  });

  const follow = async () => {
    let live = false;
    for await (const event of reader.streamJobLogs(jobId, { signal: abort.signal })) {
      if (event.type === 'status' && !live) {
        live = true;
        if (++ready === subscribers) signalReady();
      } else if (event.type === 'log') {
        const arrived = performance.now();
        const [, sent, seq] = /^sent=([\d.]+) seq=(\d+) /.exec(event.chunk.log_chunk) ?? [];
        latencies.push(arrived - Number(sent));
        readersOf[Number(seq)] += 1;
        received += 1;
      }
    }
  };
  const readers = Array.from({ length: subscribers }, () =>
    follow().catch((error) => (abort.signal.aborted ? null : error)),
  );

  const postLatencies = [];
  const phases = {};
  let mark = performance.now();
  const phase = (name) => {
    phases[name] = (performance.now() - mark) / 1000;
    mark = performance.now();
  };
  const everyone = chunks * subscribers;
  try {
    await withTimeout(allReady, READY_TIMEOUT_MS, `${subscribers} log streams did not all open`);
    phase('open_s');
    const begin = performance.now();
    const posts = [];
    for (let seq = 0; seq < chunks; seq += 1) {
      await sleep(Math.max(0, begin + seq * intervalMs - performance.now()));
      const sent = performance.now();
      sentAt[seq] = sent;
      const text = `sent=${sent.toFixed(3)} seq=${seq} ${'.'.repeat(200)}\n`;
      posts.push(publisher.appendLog(jobId, text, 'STDOUT').then(() => postLatencies.push(performance.now() - sent)));
    }
    // Past here every wait is bounded and gives up quietly: what did not arrive counts as late.
    await within(Promise.all(posts), DRAIN_TIMEOUT_MS);
    phase('publish_s');
    const drainUntil = performance.now() + DRAIN_TIMEOUT_MS;
    while (received < everyone && performance.now() < drainUntil) await sleep(20);
    phase('drain_s');
    // Ending the job ends every stream once it has sent every chunk.
    await within(publisher.reportStatus(jobId, { status: 'SUCCESS' }), DRAIN_TIMEOUT_MS);
    const ended = await within(Promise.all(readers), DRAIN_TIMEOUT_MS);
    phase('end_s');
    const failure = ended?.find((outcome) => outcome instanceof Error);
    if (failure) throw failure;
  } finally {
    abort.abort();
  }
  const gaveUp = performance.now();
  for (let seq = 0; seq < chunks; seq += 1) {
    for (let n = readersOf[seq]; n < subscribers; n += 1) latencies.push(gaveUp - sentAt[seq]);
  }
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: percentile(latencies, 100),
    received,
    expected: everyone,
    missing: everyone - received,
    post_p50_ms: percentile(postLatencies, 50),
    post_p99_ms: percentile(postLatencies, 99),
    posts_unanswered: chunks - postLatencies.length,
    ...phases,
  };
}

function withTimeout(promise, ms, message) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${message} within ${ms} ms`)), ms);
    }),
  ]);
}

/** The value of `promise` if it settles within `ms`, else undefined (it is not cancelled). */
function within(promise, ms) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    }),
  ]);
}
