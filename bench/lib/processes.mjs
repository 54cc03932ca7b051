/**
 * Child processes of the bench: the control plane and the baselines run apart from the load
 * generator, so the two do not share an event loop and the server's RSS is its own.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { deferCleanup } from './cleanup.mjs';
import { CHILDREN_DIR, childEnv, controlPlaneEnv, SERVER_BIN } from './environment.mjs';

// A minute: on a shared machine under load (a load average of 20 on 2 cores was seen) a server can take half of it.
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

/**
 * Starts `node <script> ...args` and resolves once a line of stdout (or of stderr, with
 * `readyOn: 'stderr'`) matches `ready` (its first group is returned as `match`). Output is drained
 * all along, so a chatty child never blocks on a full pipe; the last lines of stderr are kept for
 * error messages, and every stderr line goes to `onStderr` when given.
 */
export function startChild(script, args, { env, ready, name, nodeArgs = [], readyOn = 'stdout', onStderr }) {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => {
    stderr = (stderr + text).slice(-4000);
    onStderr?.(text);
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  const started = new Promise((resolve, reject) => {
    let stdout = '';
    let matched = false;
    const timer = setTimeout(
      () => fail(new Error(`${name} did not start within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    function fail(error) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\n${stderr}`));
    }
    child.stdout.setEncoding('utf8');
    child[readyOn === 'stderr' ? 'stderr' : 'stdout'].on('data', (text) => {
      if (matched) return; // keep draining, stop looking
      stdout += text;
      const match = ready.exec(stdout);
      if (match) {
        matched = true;
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    if (readyOn === 'stderr') child.stdout.resume();
    exited.then(({ code, signal }) => {
      if (!matched) fail(new Error(`${name} exited before it was ready (code ${code}, signal ${signal})`));
    });
  });

  /** SIGTERM (graceful), SIGKILL after a while; resolves once the process is gone. */
  const stop = deferCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  });
  started.catch(() => stop());

  return started.then((match) => ({ pid: child.pid, match, exited, stderr: () => stderr, stop }));
}

/**
 * Node's own options for every control plane started from now on (`--server-cpu-prof`), after
 * those of `BENCH_SERVER_NODE_ARGS` (space-separated, e.g. `--require ./trace.cjs`).
 */
let controlPlaneNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);

/**
 * Every control plane started from now on runs with `node --cpu-prof` and writes its profile to
 * `dir` when it stops (a graceful stop: SIGTERM, then the process exits by itself).
 */
export function profileControlPlanes(dir) {
  controlPlaneNodeArgs = [...controlPlaneNodeArgs, '--cpu-prof', `--cpu-prof-dir=${dir}`];
}

/**
 * The real `trellis-server` binary over `databaseUrl`, on a loopback port of its own, with its
 * data dir (and the filesystem artifact store) in a temp dir removed on `stop()`. `env` adds
 * settings a scenario needs (a higher cap, say) to the control plane's environment; `serverBin`
 * runs another build's server (a baseline build of another revision).
 */
export async function startControlPlaneProcess(databaseUrl, { env = {}, serverBin = SERVER_BIN, nodeArgs = [] } = {}) {
  const dataDir = await mkdtemp(join(tmpdir(), 'trellis-bench-server-'));
  const removeDataDir = deferCleanup(() => rm(dataDir, { recursive: true, force: true }));
  const artifactsDir = join(dataDir, 'artifacts');
  try {
    const child = await startChild(serverBin, [], {
      name: 'trellis-server',
      nodeArgs: [...controlPlaneNodeArgs, ...nodeArgs],
      env: { ...controlPlaneEnv({ databaseUrl, dataDir, artifactsUrl: pathToFileURL(artifactsDir).href }), ...env },
      ready: /listening on (http:\/\/\S+)\r?\n/,
    });
    return {
      url: child.match,
      pid: child.pid,
      artifactsDir,
      async stop() {
        await child.stop();
        await removeDataDir();
      },
    };
  } catch (error) {
    await removeDataDir();
    throw error;
  }
}

/** bench/children/bare-server.mjs: plain `node:http` answering like the routes under test. */
export async function startBareServer() {
  const child = await startChild(join(CHILDREN_DIR, 'bare-server.mjs'), [], {
    name: 'bare node:http server',
    env: {},
    ready: /listening on (http:\/\/\S+)\r?\n/,
  });
  return { url: child.match, pid: child.pid, stop: () => child.stop() };
}

/**
 * The memory only this process holds (`Private_Clean` + `Private_Dirty` of smaps_rollup, bytes):
 * its RSS without the pages it shares, such as the `node` binary's code mapped by every Node
 * process on the machine. What one more process costs; null when the process is gone.
 */
export function privateBytesOf(pid) {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    let kB = 0;
    for (const match of rollup.matchAll(/^Private_(?:Clean|Dirty):\s+(\d+)\s+kB/gm)) kB += Number(match[1]);
    return kB * 1024;
  } catch {
    return null;
  }
}

/** Resident set size of a process in bytes (Linux `/proc/<pid>/status` VmRSS), or null elsewhere. */
export function rssOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/**
 * CPU time a process has used so far, user + system, in seconds (Linux `/proc/<pid>/stat`), or
 * null elsewhere. Less sensitive than wall time to other work on the machine.
 */
export function cpuSecondsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at state; utime and stime are
    // the 14th and 15th fields of the line, in clock ticks (100 per second on Linux).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}
const CLOCK_TICKS_PER_SECOND = 100;

/** Samples a process's RSS every `intervalMs` until `stop()`, which returns the first and highest. */
export function sampleRss(pid, intervalMs = 20) {
  const first = rssOf(pid);
  let peak = first;
  let samples = first === null ? 0 : 1;
  const timer = setInterval(() => {
    const rss = rssOf(pid);
    if (rss === null) return;
    samples += 1;
    if (peak === null || rss > peak) peak = rss;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      const last = rssOf(pid);
      if (last !== null && (peak === null || last > peak)) peak = last;
      return { first, peak, samples };
    },
  };
}
