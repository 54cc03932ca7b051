/**
 * A Postgres of a test's own (issue 30's fault harness): `initdb` and `pg_ctl` in a temp dir, on
 * a free loopback port, so a scenario can restart it or `kill -9` it without touching the shared
 * Postgres other tests use. As root, the server runs as the `postgres` user (Postgres refuses
 * root). It is always removed: `destroy()`, and at the latest when the test process exits.
 */
import { execFile, execFileSync } from 'node:child_process';
import { accessSync, appendFileSync, chownSync, constants, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../objectStorage.js';

const run = promisify(execFile);

/** Where Debian's Postgres puts its server programs; `TRELLIS_TEST_PG_BIN` names another dir. */
export function postgresBinDir(): string | null {
  const candidates = [process.env.TRELLIS_TEST_PG_BIN, '/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin'];
  for (const dir of candidates) {
    if (!dir) continue;
    try {
      accessSync(join(dir, 'initdb'), constants.X_OK);
      accessSync(join(dir, 'pg_ctl'), constants.X_OK);
      return dir;
    } catch {
      // not this one
    }
  }
  return null;
}

export interface DedicatedPostgres {
  /** The temp dir holding its data and log; gone after `destroy()`. */
  readonly dir: string;
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication). */
  readonly url: string;
  /** The server's log (restarts, crash recovery). */
  log(): string;
  /** Stops it cleanly (`pg_ctl stop -m fast`): connections are closed, the port refuses. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops and starts it, down for `downMs` in between. */
  restart(downMs?: number): Promise<void>;
  /** `SIGKILL` to the postmaster and every backend: a crash; `start()` then runs crash recovery. */
  kill9(): void;
  /** Stops it at once and removes its directory. Idempotent. */
  destroy(): Promise<void>;
}

const asRoot = process.getuid?.() === 0;

/** The command line, as the `postgres` user when we are root. */
function command(bin: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
}

/** initdb + pg_ctl start in a fresh temp dir on a free port (an error when no Postgres server programs are installed). */
export async function startDedicatedPostgres(): Promise<DedicatedPostgres> {
  const bin = postgresBinDir();
  if (bin === null) {
    throw new Error('no Postgres server programs (initdb, pg_ctl) in /usr/lib/postgresql/*/bin or TRELLIS_TEST_PG_BIN');
  }
  const root = mkdtempSync(join(tmpdir(), 'trellis-faults-pg-'));
  const dataDir = join(root, 'data');
  const logFile = join(root, 'postgres.log');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(root, uid, gid);
  }
  let destroyed = false;
  const onExit = () => {
    if (!destroyed) killAll(dataDir);
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  const exec = async (program: string, args: string[]) => {
    const [file, argv] = command(join(bin, program), args);
    try {
      await run(file, argv, { cwd: root, timeout: 120_000 });
    } catch (error) {
      const detail = error as { stdout?: string; stderr?: string };
      throw new Error(
        `${program} ${args.join(' ')} failed: ${String(error)}\n${detail.stdout ?? ''}${detail.stderr ?? ''}\n${readLog(logFile)}`,
      );
    }
  };

  const port = await freePort();
  await exec('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  // Settings for a throwaway server: TCP on loopback only, no fsync (that only guards against
  // the machine crashing). Commits stay synchronous: with `synchronous_commit = off` a `kill -9`
  // loses commits already acknowledged (the WAL writer had not written them yet), a loss no real
  // deployment accepts, and the scenarios then chase it (a log batch the agent was told was
  // stored is gone, so its next batch is a gap).
  appendFileSync(
    join(dataDir, 'postgresql.conf'),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      "unix_socket_directories = ''",
      'fsync = off',
      'full_page_writes = off',
      'max_connections = 40',
      'shared_buffers = 16MB',
      '',
    ].join('\n'),
  );
  const start = () => exec('pg_ctl', ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start']);
  const stop = (mode: 'fast' | 'immediate') => exec('pg_ctl', ['-D', dataDir, '-w', '-t', '60', '-m', mode, 'stop']);
  await start();

  return {
    dir: root,
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    log: () => readLog(logFile),
    stop: () => stop('fast'),
    start,
    async restart(downMs = 0) {
      await stop('fast');
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      await start();
    },
    kill9: () => killAll(dataDir),
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      killAll(dataDir);
      process.removeListener('exit', onExit);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * SIGKILL to the postmaster of `dataDir` (its pid is postmaster.pid's first line) and to its
 * children; returns once they are gone (a dead postmaster left unreaped still holds its pid, so
 * its pid file is then removed: the next start must not mistake it for a running server).
 */
function killAll(dataDir: string): void {
  const pidFile = join(dataDir, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  } catch {
    return; // not running
  }
  if (!Number.isInteger(pid) || pid <= 0) return;
  const targets = [pid, ...childrenOf(pid)];
  for (const target of targets) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + 10_000;
  while (targets.some(alive) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  rmSync(pidFile, { force: true });
}

/** Whether `pid` runs (a zombie does not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The pids whose parent is `parent` (from /proc). */
function childrenOf(parent: number): number[] {
  const found: number[] = [];
  try {
    const listed = execFileSync('ps', ['-o', 'pid=', '--ppid', String(parent)], { encoding: 'utf8' });
    for (const line of listed.split('\n')) {
      const pid = Number(line.trim());
      if (Number.isInteger(pid) && pid > 0) found.push(pid);
    }
  } catch {
    // none
  }
  return found;
}
