import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs `test/fixtures/<script>` with node in a process of its own; its stdout. */
export async function runFixture(script: string, args: string[], timeoutMs = 120_000): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    [fileURLToPath(new URL(`../fixtures/${script}`, import.meta.url)), ...args],
    {
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return stdout;
}

/**
 * Child processes import the built packages (store-sql and core), as a deployment would. Fail
 * early, saying how to fix it, when a build is missing or older than its sources (the root
 * `npm test` builds first).
 */
export function requireFreshBuild(): void {
  for (const name of ['core', 'store-sql']) {
    const dir = fileURLToPath(new URL(`../../../${name}/`, import.meta.url));
    let built: number;
    try {
      built = statSync(`${dir}dist/.tsbuildinfo`).mtimeMs;
    } catch {
      throw new Error(`packages/${name}/dist is missing: run \`npx tsc -b\` (npm test does) before these tests`);
    }
    if (newestMtime(`${dir}src`) > built) {
      throw new Error(`packages/${name}/dist is older than its src: run \`npx tsc -b\` (npm test does) first`);
    }
  }
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}
