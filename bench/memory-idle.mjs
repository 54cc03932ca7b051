#!/usr/bin/env node
/**
 * Memory at idle (issue 31): a real `trellis-server` (SQLite and the filesystem store by default,
 * `--postgres` for the shared test Postgres) and one registered `trellis-agent`, both idle; prints
 * their RSS and private memory (RSS less the pages shared with other processes, such as the
 * `node` binary's code) just after start-up (`--settle-ms` after the agent started) and idle
 * (`--idle-ms` after it: V8 gives back the heap start-up grew some 20-30 s after), their V8 heap, and with `--modules` the modules each loaded (a preload recording the ESM
 * loader's loads and CommonJS `require`s), largest packages first. `--snapshot DIR` writes a
 * .heapsnapshot of each (`--heapsnapshot-signal=SIGUSR2`) into DIR. `--baseline-rev REV` measures
 * the build of REV too (exported and built in a temp dir, as `runs` does), the two builds taking
 * turns for `--rounds` rounds, each on a fresh database; the CPU seconds each process used until
 * it was measured (start-up, then a few idle seconds) are printed beside the RSS.
 *
 *   node bench/memory-idle.mjs [--postgres] [--modules] [--snapshot DIR] [--settle-ms 5000] [--idle-ms 60000]
 *                              [--baseline-rev REV] [--rounds 1]
 *                              [--server-node-args '--flag ...'] [--agent-node-args '--flag ...']
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TrellisClient } from '@trellis/client';
import { withFreshDatabase } from './lib/databases.mjs';
import { buildAtRev } from './lib/buildAtRev.mjs';
import { BOOTSTRAP_TOKEN, controlPlaneEnv, SERVER_BIN } from './lib/environment.mjs';
import { sleep } from './lib/load.mjs';
import { cpuSecondsOf, privateBytesOf, rssOf, startChild } from './lib/processes.mjs';

const AGENT_BIN = fileURLToPath(new URL('../packages/agent/dist/bin/trellis-agent.js', import.meta.url));
const FAKE_ENGINE = fileURLToPath(new URL('./fake-engine.sh', import.meta.url));
const MB = 1024 * 1024;

const { values } = parseArgs({
  options: {
    postgres: { type: 'boolean', default: false },
    modules: { type: 'boolean', default: false },
    snapshot: { type: 'string' },
    'settle-ms': { type: 'string', default: '5000' },
    'idle-ms': { type: 'string', default: '60000' },
    'baseline-rev': { type: 'string' },
    rounds: { type: 'string', default: '1' },
    'server-node-args': { type: 'string' },
    'agent-node-args': { type: 'string' },
  },
});

const log = (line) => process.stderr.write(`${line}\n`);
const dir = await mkdtemp(join(tmpdir(), 'trellis-memory-idle-'));
const today = { label: 'this tree', serverBin: SERVER_BIN, agentBin: AGENT_BIN };
let baseline = null;
try {
  if (values['baseline-rev']) baseline = await buildAtRev(values['baseline-rev'], log);
  const runs = [];
  for (let round = 0; round < Number(values.rounds); round += 1) {
    const order = baseline ? (round % 2 === 0 ? [today, baseline] : [baseline, today]) : [today];
    for (const build of order) {
      const figures = values.postgres
        ? await withFreshDatabase('postgres', (url) => measure(url, build))
        : await measure(null, build);
      log(
        `round ${round + 1}, ${build.label}: idle RSS server ${figures.server.rss_mb.toFixed(1)} MB (${figures.server.private_mb.toFixed(1)} private), agent ${figures.agent.rss_mb.toFixed(1)} MB (${figures.agent.private_mb.toFixed(1)} private); just started ${figures.server.rss_started_mb.toFixed(1)} / ${figures.agent.rss_started_mb.toFixed(1)} MB`,
      );
      runs.push({ build: build.label, round: round + 1, ...figures });
    }
  }
  const summary = {};
  for (const build of baseline ? [today, baseline] : [today]) {
    const mine = runs.filter((run) => run.build === build.label);
    summary[build.label] = Object.fromEntries(
      ['server', 'agent'].flatMap((who) =>
        ['rss_mb', 'private_mb', 'rss_started_mb', 'private_started_mb', 'cpu_s'].map((key) => [
          `${who}_${key}_median`,
          median(mine.map((run) => run[who][key])),
        ]),
      ),
    );
  }
  process.stdout.write(
    `${JSON.stringify({ database: values.postgres ? 'postgres' : 'sqlite', summary, runs }, null, 1)}\n`,
  );
} finally {
  await baseline?.remove();
  await rm(dir, { recursive: true, force: true });
}

function median(list) {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function measure(givenDatabaseUrl, build) {
  const dataDir = await mkdtemp(join(dir, 'run-'));
  const databaseUrl = givenDatabaseUrl ?? `sqlite://${join(dataDir, 'trellis.db')}`;
  const probe = (name) => {
    const args = [];
    if (values.modules) args.push('--import', pathToFileURL(join(dir, 'probe.mjs')).href);
    if (values.snapshot) args.push('--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${join(values.snapshot, name)}`);
    const extra = values[`${name}-node-args`];
    if (extra) args.push(...extra.split(' ').filter(Boolean));
    return args;
  };
  if (values.modules) writeProbe();
  if (values.snapshot)
    for (const name of ['server', 'agent']) mkdirSync(join(values.snapshot, name), { recursive: true });
  const server = await startChild(build.serverBin, [], {
    name: 'trellis-server',
    nodeArgs: probe('server'),
    env: {
      ...controlPlaneEnv({ databaseUrl, dataDir, artifactsUrl: pathToFileURL(join(dataDir, 'artifacts')).href }),
      MEMPROBE_OUT: join(dir, 'server-modules.json'),
    },
    ready: /listening on (http:\/\/\S+)\r?\n/,
  });
  let agent = null;
  try {
    const user = await signIn(server.match);
    const registration = await user.registerAgent({ name: 'memory-idle' });
    agent = await startChild(build.agentBin, ['run', '--work-dir', join(dataDir, 'agent'), '--log-level', 'info'], {
      name: 'trellis-agent',
      nodeArgs: probe('agent'),
      env: {
        TRELLIS_URL: server.match,
        TRELLIS_WORKER_ID: registration.worker_id,
        TRELLIS_WORKER_TOKEN: registration.worker_token,
        TRELLIS_ENGINE_BIN: FAKE_ENGINE,
        TRELLIS_AGENT_CONCURRENCY: '1',
        MEMPROBE_OUT: join(dir, 'agent-modules.json'),
      },
      readyOn: 'stderr',
      ready: /"msg":"agent started"/,
    });
    const startedAt = Date.now();
    await sleep(Number(values['settle-ms']));
    // The mean of 5 reads 200 ms apart: idle RSS moves little, a GC can move it a few MB.
    const mean = async (read) => {
      let sum = 0;
      for (let i = 0; i < 5; i += 1) {
        sum += read();
        await sleep(200);
      }
      return sum / 5 / MB;
    };
    const read = async (pid) => ({ rss: await mean(() => rssOf(pid)), own: await mean(() => privateBytesOf(pid)) });
    const started = { server: await read(server.pid), agent: await read(agent.pid) };
    // V8 shrinks the heap it grew while starting only once the process has been quiet a while
    // (its memory reducer, some 20-30 s after start-up's last full GC): the idle figure is read
    // after that, when nothing but heartbeats happened for `--idle-ms`.
    await sleep(Math.max(0, Number(values['idle-ms']) - (Date.now() - startedAt)));
    const idle = { server: await read(server.pid), agent: await read(agent.pid) };
    const figures = Object.fromEntries(
      ['server', 'agent'].map((who) => [
        who,
        {
          rss_mb: idle[who].rss,
          private_mb: idle[who].own,
          rss_started_mb: started[who].rss,
          private_started_mb: started[who].own,
          cpu_s: cpuSecondsOf(who === 'server' ? server.pid : agent.pid),
        },
      ]),
    );
    if (values.modules) {
      for (const [name, pid] of [
        ['server', server.pid],
        ['agent', agent.pid],
      ]) {
        process.kill(pid, 'SIGWINCH');
        await sleep(1000);
        const report = JSON.parse(readFileSync(join(dir, `${name}-modules.json`), 'utf8'));
        figures[name].heap_used_mb = report.memoryUsage.heapUsed / MB;
        figures[name].heap_total_mb = report.memoryUsage.heapTotal / MB;
        figures[name].external_mb = report.memoryUsage.external / MB;
        figures[name].modules = modulesByPackage([
          ...report.esm,
          ...report.cjs.filter((f) => f.startsWith('/')).map((f) => pathToFileURL(f).href),
        ]);
      }
    }
    if (values.snapshot) {
      for (const [name, pid] of [
        ['server', server.pid],
        ['agent', agent.pid],
      ]) {
        process.kill(pid, 'SIGUSR2');
        const target = join(values.snapshot, name);
        for (let i = 0; i < 240; i += 1) {
          await sleep(500);
          const files = await readdir(target).catch(() => []);
          // The file appears as the snapshot starts; wait for the process to answer again.
          if (files.some((f) => f.endsWith('.heapsnapshot')) && (await writtenOut(target, files))) break;
        }
      }
    }
    return figures;
  } finally {
    await agent?.stop();
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function writtenOut(target, files) {
  const file = join(
    target,
    files.find((f) => f.endsWith('.heapsnapshot')),
  );
  const before = statSync(file).size;
  await sleep(1000);
  return before > 0 && statSync(file).size === before;
}

/**
 * Loaded modules grouped by package (node_modules/<pkg> or packages/<workspace>): how many and
 * their source size in kB (V8 keeps each module's source text), biggest first.
 */
function modulesByPackage(urls) {
  const packages = new Map();
  const unique = new Set(urls.filter((u) => u.startsWith('file:')));
  let kB = 0;
  for (const url of unique) {
    const path = fileURLToPath(url);
    let key;
    const nm = path.lastIndexOf('/node_modules/');
    if (nm >= 0) {
      const rest = path.slice(nm + 14).split('/');
      key = rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    } else {
      const ws = /\/packages\/([^/]+)\//.exec(path);
      key = ws ? `@trellis/${ws[1]}` : path;
    }
    const size = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
    kB += size / 1024;
    const entry = packages.get(key) ?? { modules: 0, kB: 0 };
    entry.modules += 1;
    entry.kB += size / 1024;
    packages.set(key, entry);
  }
  const sorted = [...packages].sort((a, b) => b[1].kB - a[1].kB);
  return {
    total: unique.size,
    source_kB: Math.round(kB),
    by_package: Object.fromEntries(sorted.map(([k, v]) => [k, `${v.modules} modules, ${Math.round(v.kB)} kB`])),
  };
}

/** The preload of `--modules`: ESM loads through a loader hook, CommonJS through Module._load. */
function writeProbe() {
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `let port;
export function initialize(data) { port = data.port; }
export async function load(url, context, next) { port.postMessage(url); return next(url, context); }
`,
  );
  writeFileSync(
    join(dir, 'probe.mjs'),
    `import { createRequire, register } from 'node:module';
import { writeFileSync } from 'node:fs';
const Module = createRequire(import.meta.url)('node:module');
const cjs = new Set();
const load = Module._load;
Module._load = function (request, parent, isMain) {
  try { cjs.add(Module._resolveFilename(request, parent, isMain)); } catch {}
  return load.apply(this, arguments);
};
const esm = new Set();
const { port1, port2 } = new MessageChannel();
port1.on('message', (url) => esm.add(url));
port1.unref();
register('./hooks.mjs', { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
process.on('SIGWINCH', () => {
  globalThis.gc?.();
  writeFileSync(process.env.MEMPROBE_OUT, JSON.stringify({ memoryUsage: process.memoryUsage(), esm: [...esm], cjs: [...cjs] }));
});
`,
  );
}

/** A signed-in user (bootstrap sign-in, then a CLI token, as `trellis login` gets one). */
async function signIn(url) {
  const bootstrap = await fetch(`${url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`, { redirect: 'manual' });
  const cookie = (bootstrap.headers.get('set-cookie') ?? '').split(';')[0];
  if (!cookie) throw new Error(`bootstrap sign-in failed: ${bootstrap.status}`);
  const origin = new URL(controlPlaneEnv({}).TRELLIS_WEB_URL).origin;
  const web = new TrellisClient({ baseUrl: url, auth: { kind: 'cookie', cookie, origin } });
  const deviceCode = crypto.randomUUID();
  const { verification_code } = await web.generateCliLogin(deviceCode);
  const { access_token } = await web.exchangeCliLogin({ device_code: deviceCode, verification_code });
  return new TrellisClient({ baseUrl: url, auth: { kind: 'bearer', accessToken: () => access_token } });
}
