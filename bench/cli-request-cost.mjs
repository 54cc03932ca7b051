#!/usr/bin/env node
/**
 * What one request of each kind the stock-CLI sessions send (`cli-sessions`, issue 31) costs a
 * `trellis-server` in CPU, asked one after another on one keep-alive socket: `--count` requests of
 * each kind per round (after 300 not counted), the server's user + system time read from `/proc`
 * around them. `--baseline-rev REV` starts the build of REV too (exported and built in a temp dir,
 * as `runs` does), each server on its own copy of the same prepared database, and the two take
 * turns round by round (A B, B A, …), so both see the same machine load; the median and range over
 * the rounds are printed per kind. Setup (40 sessions' runs in 2 organizations) goes through the
 * use cases, as `cli-sessions` does.
 *
 *   node bench/cli-request-cost.mjs [--baseline-rev REV] [--count 600] [--rounds 4]
 *                                   [--kinds run,plan,log,...] [--dialect sqlite|postgres]
 *
 * `BENCH_SERVER_NODE_ARGS` adds node options to the servers (e.g. `--cpu-prof --cpu-prof-dir=DIR`).
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { buildAtRev } from './lib/buildAtRev.mjs';
import { preparedDatabase } from './lib/databases.mjs';
import { SERVER_BIN } from './lib/environment.mjs';
import { loadClient } from './lib/loadClient.mjs';
import { cpuSecondsOf, startControlPlaneProcess } from './lib/processes.mjs';
import { withUseCases } from './lib/setup.mjs';
import { discover, setUp } from './scenarios/cliSessions.mjs';

const { values } = parseArgs({
  options: {
    'baseline-rev': { type: 'string' },
    count: { type: 'string', default: '600' },
    rounds: { type: 'string', default: '4' },
    kinds: { type: 'string' },
    dialect: { type: 'string', default: 'sqlite' },
  },
});
const count = Number(values.count);
const rounds = Number(values.rounds);
const WARM_UP = 300;
const ENV = { TRELLIS_LOST_JOB_TIMEOUT_S: '3600', TRELLIS_METRICS_TOKEN: 'bench-metrics-token-0123456789' };
const log = (message) => console.error(`[cost] ${message}`);

/** The request of each kind, as the sessions send it, for the first team's runs. */
async function pathsOf(client, url, team, headers) {
  const waiting = team.runs.find((run) => !run.running);
  const running = team.runs.find((run) => run.running);
  const plan = await client.expect(200, 'GET', `/api/v2/plans/${running.planId}`, { headers });
  const logPath = new URL(plan.body.data.attributes['log-read-url'], url).pathname;
  const org = team.organization;
  return {
    run: `/api/v2/runs/${waiting.runId}`,
    plan: `/api/v2/plans/${running.planId}`,
    log: `${logPath}?limit=65536&offset=1000000`,
    workspace: `/api/v2/organizations/${org}/workspaces/${waiting.workspaceName}`,
    'workspace-runs': `/api/v2/workspaces/${waiting.workspaceId}/runs`,
    queue: `/api/v2/organizations/${org}/runs/queue`,
    capacity: `/api/v2/organizations/${org}/capacity`,
  };
}

async function startBuild(name, serverBin, url, teams) {
  const server = await startControlPlaneProcess(url, { env: ENV, serverBin });
  try {
    await discover(server.url, teams);
    const client = loadClient(server.url, { sockets: 1 });
    const team = teams[0];
    const headers = { Accept: 'application/vnd.api+json', Authorization: `Bearer ${team.token}` };
    const paths = await pathsOf(client, server.url, team, headers);
    const kinds = values.kinds ? values.kinds.split(',') : Object.keys(paths);
    for (const kind of kinds) {
      if (!paths[kind]) throw new Error(`unknown kind ${kind} (one of ${Object.keys(paths).join(', ')})`);
      for (let i = 0; i < WARM_UP; i += 1) await client.expect(200, 'GET', paths[kind], { headers });
    }
    return { name, server, client, headers, paths, kinds, costs: {} };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

async function measureRound(build) {
  for (const kind of build.kinds) {
    const cpu = cpuSecondsOf(build.server.pid);
    for (let i = 0; i < count; i += 1)
      await build.client.expect(200, 'GET', build.paths[kind], { headers: build.headers });
    build.costs[kind] = [...(build.costs[kind] ?? []), ((cpuSecondsOf(build.server.pid) - cpu) * 1000) / count];
  }
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const shown = (list) => `${median(list).toFixed(3)} (${Math.min(...list).toFixed(2)}–${Math.max(...list).toFixed(2)})`;

const baseline = values['baseline-rev'] ? await buildAtRev(values['baseline-rev'], log) : null;
try {
  log(`setting up 40 runs on ${values.dialect}…`);
  const database = await preparedDatabase(values.dialect, (url) =>
    withUseCases(url, (useCases) => setUp(useCases, 40, 20)),
  );
  const teams = database.prepared;
  const loadBefore = loadavg()[0];
  const builds = [];
  const measured = await database.withClone(async (urlA) => {
    builds.push(await startBuild('this tree', SERVER_BIN, urlA, teams));
    const runAll = async () => {
      try {
        for (let round = 0; round < rounds; round += 1) {
          for (const build of round % 2 === 0 ? builds : [...builds].reverse()) await measureRound(build);
        }
        return builds;
      } finally {
        for (const build of builds) {
          build.client.close();
          await build.server.stop();
        }
      }
    };
    if (!baseline) return runAll();
    return database.withClone(async (urlB) => {
      builds.unshift(await startBuild(baseline.label, baseline.serverBin, urlB, teams));
      return runAll();
    });
  });
  console.log(
    `ms of server CPU per request, median of ${rounds} rounds of ${count} (range); ` +
      `${values.dialect}; load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after`,
  );
  const header = ['kind', ...measured.map((build) => build.name)];
  if (measured.length === 2) header.push('ratio');
  console.log(`| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|`);
  for (const kind of measured[0].kinds) {
    const cells = measured.map((build) => shown(build.costs[kind]));
    if (measured.length === 2) {
      const [before, after] = measured.map((build) => median(build.costs[kind]));
      cells.push(`${(after / before).toFixed(2)}×`);
    }
    console.log(`| ${kind} | ${cells.join(' | ')} |`);
  }
  await database.drop?.();
} finally {
  await baseline?.remove();
}
