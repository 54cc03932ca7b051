/**
 * Cleanups still owed (databases to drop, temp dirs, child processes), so that Ctrl-C or a
 * SIGTERM in the middle of a run leaves nothing behind either.
 */
const pending = new Set();

/**
 * Registers `cleanup`; call the returned function to run it now (once) and forget it, or its
 * `cancel()` to forget it without running it (when something else took the duty over).
 */
export function deferCleanup(cleanup) {
  let done = null;
  const run = () => {
    done ??= (async () => {
      pending.delete(run);
      await cleanup();
    })();
    return done;
  };
  run.cancel = () => pending.delete(run);
  pending.add(run);
  return run;
}

/** Runs every owed cleanup, newest first, without letting one failure stop the others. */
export async function cleanUpEverything() {
  for (const run of [...pending].reverse()) await run().catch(() => {});
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    process.stderr.write(`\n[bench] ${signal}: cleaning up…\n`);
    cleanUpEverything().finally(() => process.exit(130));
  });
}
// An error nobody awaited (say, a driver's 'error' event) would end the process past every finally.
process.once('uncaughtException', (error) => {
  process.stderr.write(`bench failed: ${error?.stack ?? error}\n[bench] cleaning up…\n`);
  cleanUpEverything().finally(() => process.exit(1));
});
