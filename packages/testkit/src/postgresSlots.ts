/**
 * A budget of Postgres suites running at once on this machine, across test worker processes and
 * across test runs (say, two checkouts tested side by side): a suite holds one of
 * `TRELLIS_TEST_POSTGRES_SUITES` (default 2) slots while it runs, so the connections the tests
 * open stay near slots × one suite's pools, whatever the number of vitest workers. A slot is a
 * file holding its owner's pid in a directory of the temp dir; the slot of a process that died
 * is taken over. (Two waiters that find the same dead slot at once may both take it: the budget
 * is then exceeded by one for a while, which is harmless.)
 */
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const SLOT_DIR = join(tmpdir(), 'trellis-test-postgres-slots');

/** How many Postgres suites may run at once (`TRELLIS_TEST_POSTGRES_SUITES`, default 2). */
export function testPostgresSuiteSlots(): number {
  const raw = process.env.TRELLIS_TEST_POSTGRES_SUITES;
  const value = raw ? Number(raw) : 2;
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`TRELLIS_TEST_POSTGRES_SUITES must be a positive integer (got "${raw}")`);
  }
  return value;
}

/** Suites of this process in the slot it holds: a suite nested in another shares its slot. */
let nested = 0;
let held: Promise<() => Promise<void>> | undefined;

/** Waits for a free slot and takes it; call the returned function to give it back. */
export async function acquirePostgresSlot(): Promise<() => Promise<void>> {
  nested++;
  held ??= takeSlot(testPostgresSuiteSlots(), SLOT_DIR);
  const release = await held;
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    nested--;
    if (nested === 0) {
      held = undefined;
      await release();
    }
  };
}

/** The slot machinery itself, on any directory (for its own tests). */
export async function takeSlot(slots: number, dir: string): Promise<() => Promise<void>> {
  await mkdir(dir, { recursive: true });
  const owner = `${process.pid}\n`;
  for (;;) {
    for (let index = 0; index < slots; index++) {
      const path = join(dir, `slot-${index}`);
      if (await tryTake(path, owner)) {
        return async () => {
          const holder = await readFile(path, 'utf8').catch(() => '');
          if (holder === owner) await unlink(path).catch(() => {});
        };
      }
    }
    await sleep(200);
  }
}

async function tryTake(path: string, owner: string): Promise<boolean> {
  try {
    const file = await open(path, 'wx');
    await file.writeFile(owner);
    await file.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const holder = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
  // An empty file is a slot being written right now; leave it to its owner.
  if (Number.isInteger(holder) && holder !== process.pid && !isAlive(holder)) {
    await unlink(path).catch(() => {});
  }
  return false;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
