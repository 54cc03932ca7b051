import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { type RetryClock, systemClock } from '../retry.js';

/** The lock stayed held by a live process for longer than the wait allowed. */
export class LockTimeoutError extends Error {
  override name = 'LockTimeoutError';
  constructor(readonly path: string) {
    super(
      `timed out waiting for the lock ${path}, held by another trellis process; if none is running, delete that file`,
    );
  }
}

export interface LockOptions {
  /** A lock older than this is taken to belong to a crashed process. */
  staleMs?: number;
  /** Give up waiting after this long. */
  timeoutMs?: number;
  pollMs?: number;
  /** Time for the waits between attempts; the real clock by default. */
  clock?: RetryClock;
}

/**
 * Runs `work` holding an exclusive lock file (created with O_EXCL). Two processes (`trellis`,
 * `trellis-agent register`) refreshing tokens at once take turns, so the second sees the first one's new tokens instead of
 * presenting an already-rotated refresh token (which would revoke the whole login).
 *
 * A lock is stale when its process is gone (same host) or it is older than `staleMs`; a stale
 * lock is moved aside with an atomic rename, and put back if it turns out to be fresh after all.
 */
export async function withFileLock<T>(path: string, work: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const staleMs = options.staleMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 90_000;
  const pollMs = options.pollMs ?? 50;
  const owner = `${process.pid}@${hostname()}@${Date.now()}@${Math.random().toString(36).slice(2)}`;
  const clock = options.clock ?? systemClock;
  const deadline = clock.now().getTime() + timeoutMs;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });

  for (;;) {
    if (tryCreate(path, owner)) break;
    const holder = readHolder(path);
    if (holder !== null && isStale(path, holder, staleMs)) {
      breakStaleLock(path, holder);
      continue;
    }
    if (clock.now().getTime() > deadline) {
      throw new LockTimeoutError(path);
    }
    await clock.sleep(pollMs + Math.floor(Math.random() * pollMs));
  }

  try {
    return await work();
  } finally {
    if (readHolder(path) === owner) unlinkSync(path);
  }
}

function tryCreate(path: string, owner: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, owner);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** The lock's content, or null when it vanished (or is still being written: empty). */
function readHolder(path: string): string | null {
  try {
    const text = readFileSync(path, 'utf8');
    return text === '' ? null : text;
  } catch {
    return null;
  }
}

function isStale(path: string, holder: string, staleMs: number): boolean {
  const [pid, host] = holder.split('@');
  if (host === hostname() && pid && !processAlive(Number(pid))) return true;
  try {
    return Date.now() - statSync(path).mtimeMs > staleMs;
  } catch {
    return false;
  }
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function breakStaleLock(path: string, holder: string): void {
  const aside = `${path}.stale-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // someone else moved or released it first
  }
  // Between reading the holder and the rename another process may have broken the same stale
  // lock and taken a fresh one: if so, put that one back (link fails if a third took it since).
  if (readHolder(aside) !== holder) {
    try {
      linkSync(aside, path);
    } catch {
      // a new lock is already in place
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // already gone
  }
}
