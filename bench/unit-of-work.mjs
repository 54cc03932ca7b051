#!/usr/bin/env node
/**
 * The cost of a unit of work itself on Postgres, in-process, without HTTP: an owner-scoped
 * read-only unit of work reading one vineyard (`uow.read(ownerScope(owner), s => s.vineyards.get(…))`:
 * BEGIN READ ONLY with the scope's settings, the SELECT, COMMIT), one at a time and 8 at once
 * (pool of 10). Prints units of work per second and this process's CPU per unit of work.
 *
 *   node bench/unit-of-work.mjs <database url> [count (default 2000)] [repo root (default this one)]
 *
 * The repo root lets one run compare two builds (a copy of the tree before a change, with its
 * own `tsc -b` output) on the same machine, turn by turn; each migrates `<database url>` first.
 * Run after `tsc -b`: it uses the built packages from dist.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [url, countArg, rootArg] = process.argv.slice(2);
if (!url) {
  console.error('usage: node bench/unit-of-work.mjs <database url> [count] [repo root]');
  process.exit(2);
}
const count = Number(countArg ?? 2000);
const root = resolve(rootArg ?? resolve(dirname(fileURLToPath(import.meta.url)), '..'));
const load = (path) => import(pathToFileURL(`${root}/packages/${path}`).href);
const { openSqlStore } = await load('store-sql/dist/index.js');
const { systemScope, ownerScope } = await load('core/dist/index.js');
const { newUser, newVineyard } = await load('testkit/dist/conformance/stores/fixtures.js');

const store = await openSqlStore(url, { poolSize: 10, logger: { warn() {}, error() {} } });
try {
  await store.migrate();
  const { user, vineyard } = await store.uow.run(systemScope, async (stores) => {
    const user = await stores.users.create(newUser());
    return { user, vineyard: await stores.vineyards.create(newVineyard(user.id)) };
  });
  const read = () => store.uow.read(ownerScope(user.id), (stores) => stores.vineyards.get(user.id, vineyard.id));
  for (let i = 0; i < 300; i += 1) await read(); // warm-up: JIT, pooled connections
  const results = {};
  for (const [name, concurrency] of [
    ['one at a time', 1],
    ['8 at once', 8],
  ]) {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    let left = count;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left-- > 0) await read();
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    results[name] = {
      perSecond: Math.round(count / seconds),
      cpuMicrosecondsEach: Math.round((cpu.user + cpu.system) / count),
    };
  }
  console.log(JSON.stringify({ root, count, results }));
} finally {
  await store.close();
}
