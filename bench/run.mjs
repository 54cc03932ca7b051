#!/usr/bin/env node
/**
 * `npm run bench`: the control plane's benchmarks (DESIGN §8). Every figure is measured beside a
 * baseline taken in the same run on the same machine, printed as one table and written as JSON
 * to bench-results/<timestamp>.json and bench-results/latest.json.
 *
 *   node bench/run.mjs [--quick] [--only <scenario>[,<scenario>...]] [--dialect sqlite|postgres]
 *                      [--scale] [--out <dir>] [--server-cpu-prof <dir>]
 *                      [--vines N] [--agents K] [--rounds R] [--flows plan-deploy,deploy,run]
 *                      [--baseline-rev <rev>] [--real-engine] [--trace]
 *
 * Scenarios: claims, heartbeats, logs, sse, uploads; and, only when asked, scale (minutes of
 * seeding: --scale or --only scale), runs (end to end with real agents, beside a build of the
 * previous commit: --only runs) and cli-sessions (1,000 stock-CLI sessions polling the Terraform
 * Cloud API at the CLI's cadence: --only cli-sessions). Run after `tsc -b` (npm run bench does both):
 * it uses the built packages from dist.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { checkTestPostgres } from './lib/databases.mjs';
import { REPO_ROOT } from './lib/environment.mjs';
import { profileControlPlanes } from './lib/processes.mjs';
import { currentLoad, machine, renderTable, writeJson } from './lib/report.mjs';
import { claims } from './scenarios/claims.mjs';
import { cliSessions } from './scenarios/cliSessions.mjs';
import { fleet } from './scenarios/fleet.mjs';
import { heartbeats } from './scenarios/heartbeats.mjs';
import { logIngest } from './scenarios/logIngest.mjs';
import { logStream } from './scenarios/logStream.mjs';
import { FLOWS, runs } from './scenarios/runs.mjs';
import { scale } from './scenarios/scale.mjs';
import { uploads } from './scenarios/uploads.mjs';

const SCENARIOS = [claims, heartbeats, logIngest, logStream, uploads, scale, fleet, runs, cliSessions];
/** What runs without --only: every scenario but those that ask to be named (scale, runs). */
const DEFAULT_SCENARIOS = SCENARIOS.filter((scenario) => scenario.byDefault !== false);
const DIALECTS = ['sqlite', 'postgres'];

const USAGE = `Usage: node bench/run.mjs [options]   (npm run bench -- [options])

  --quick                small counts: a smoke test, not a measurement
  --only <names>         scenarios to run, comma-separated: ${SCENARIOS.map((s) => s.name).join(', ')}
  --scale                the scale scenario: requests at 1,000 and at 100,000 jobs (seeds
                         both databases in bulk; with --only, added to the named scenarios)
  --dialect <names>      databases: sqlite, postgres (default both; Postgres is skipped, loudly,
                         when it cannot be reached)
  --out <dir>            where the JSON goes (default bench-results/)
  --server-cpu-prof <dir>
                         each trellis-server runs with node --cpu-prof and leaves its
                         .cpuprofile in <dir> when it stops (profiling slows it: not a measurement)

  cli-sessions (--only cli-sessions): 1,000 stock-CLI sessions (40 with --quick) in 20
                         organizations polling runs, queue, capacity and logs at the CLI's
                         cadence for 90 s, beside a bare node:http server

  runs (--only runs): N vines, K real agents, a fake engine; PLAN→DEPLOY and one-job DEPLOY
  --vines <N>            vines, one run each (default 40; 4 with --quick)
  --agents <K>           trellis-agent processes, one job at a time each (default 4; 2 with --quick)
  --rounds <R>           rounds per build, taking turns with the baseline (default 3; 1 with --quick)
  --flows <names>        plan-deploy, deploy, run (default all three; run: a run of the
                         Terraform Cloud API with auto-apply)
  --baseline-rev <rev>   the build beside this one (default HEAD~1; with --quick and no
                         --baseline-rev, this same build: no checkout)
  --real-engine          OpenTofu from ~/.cache/trellis-peers/bin/tofu instead of the fake engine
  --trace                the fake engine notes when each command starts and ends: the JSON gets
                         each job type's steps (claimed → init, init, …, → finished), p50
  --help`;

function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      scale: { type: 'boolean', default: false },
      only: { type: 'string', multiple: true },
      dialect: { type: 'string', multiple: true },
      out: { type: 'string' },
      'server-cpu-prof': { type: 'string' },
      vines: { type: 'string' },
      agents: { type: 'string' },
      rounds: { type: 'string' },
      flows: { type: 'string', multiple: true },
      'baseline-rev': { type: 'string' },
      'real-engine': { type: 'boolean', default: false },
      trace: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const list = (items) =>
    (items ?? [])
      .flatMap((item) => item.split(','))
      .map((item) => item.trim())
      .filter(Boolean);
  const named = list(values.only);
  const only = values.scale ? [...new Set([...named, scale.name])] : named;
  const unknown = only.filter((name) => !SCENARIOS.some((scenario) => scenario.name === name));
  if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')}\n\n${USAGE}`);
  const dialects = list(values.dialect);
  const badDialects = dialects.filter((name) => !DIALECTS.includes(name));
  if (badDialects.length > 0) throw new Error(`unknown dialect ${badDialects.join(', ')}\n\n${USAGE}`);
  const count = (name) => {
    if (values[name] === undefined) return undefined;
    const value = Number(values[name]);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number ≥ 1\n\n${USAGE}`);
    return value;
  };
  const flows = list(values.flows);
  const badFlows = flows.filter((name) => !FLOWS.includes(name));
  if (badFlows.length > 0) throw new Error(`unknown flow ${badFlows.join(', ')}\n\n${USAGE}`);
  return {
    help: values.help,
    quick: values.quick,
    only: only.length > 0 ? only : DEFAULT_SCENARIOS.map((scenario) => scenario.name),
    dialects: dialects.length > 0 ? dialects : DIALECTS,
    out: values.out ?? join(REPO_ROOT, 'bench-results'),
    serverCpuProf: values['server-cpu-prof'] ?? null,
    runs: {
      vines: count('vines'),
      agents: count('agents'),
      rounds: count('rounds'),
      flows: flows.length > 0 ? flows : undefined,
      baselineRev: values['baseline-rev'],
      realEngine: values['real-engine'],
      trace: values.trace,
    },
  };
}

function loudly(text) {
  const bar = '!'.repeat(78);
  process.stderr.write(`\n${bar}\n${text.replace(/^/gm, '!! ')}\n${bar}\n\n`);
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (options.serverCpuProf) profileControlPlanes(options.serverCpuProf);
  const startedAt = new Date();
  const host = machine();
  const results = [];
  const skipped = [];

  let dialects = options.dialects;
  let postgres = null;
  if (dialects.includes('postgres')) {
    postgres = await checkTestPostgres();
    if (!postgres.available) {
      loudly(
        `POSTGRES ROWS SKIPPED: Postgres is not reachable at ${postgres.adminUrl}\n(${postgres.reason}).\n` +
          'Start it (127.0.0.1:5432, user postgres) or set TRELLIS_TEST_POSTGRES_URL to measure Postgres.',
      );
      dialects = dialects.filter((dialect) => dialect !== 'postgres');
      skipped.push({ scenario: '*', dialect: 'postgres', reason: `Postgres not reachable: ${postgres.reason}` });
    }
  }

  const log = (text) => process.stderr.write(`[bench] ${text}\n`);
  const scenarios = SCENARIOS.filter((scenario) => options.only.includes(scenario.name));
  for (const scenario of scenarios) {
    const begin = performance.now();
    log(`${scenario.name}…`);
    await scenario.run({
      quick: options.quick,
      dialects,
      options: { runs: options.runs },
      log,
      record: (result) => results.push(result),
      skip: (entry) => {
        skipped.push(entry);
        loudly(`SKIPPED ${entry.scenario}${entry.dialect ? ` on ${entry.dialect}` : ''}: ${entry.reason}`);
      },
    });
    log(`${scenario.name} done in ${((performance.now() - begin) / 1000).toFixed(1)} s`);
  }

  const finishedAt = new Date();
  const report = {
    schema: 'trellis-bench/1',
    started_at: startedAt.toISOString(),
    finished_at: finishedAt.toISOString(),
    duration_s: (finishedAt.getTime() - startedAt.getTime()) / 1000,
    options: {
      quick: options.quick,
      only: options.only,
      dialects: options.dialects,
      ...(options.only.includes(runs.name) ? { runs: options.runs } : {}),
    },
    machine: { ...host, loadavg_1m_at_end: currentLoad() },
    postgres: postgres
      ? { available: postgres.available, ...(postgres.available ? {} : { reason: postgres.reason }) }
      : { available: false, reason: 'not requested' },
    baselines: Object.assign({}, ...scenarios.map((scenario) => scenario.baselines)),
    results,
    skipped,
  };
  const path = await writeJson(options.out, report);

  const out = process.stdout;
  out.write(
    `\nTrellis control plane benchmarks${options.quick ? ' (--quick: smoke-test counts, not a measurement)' : ''}\n`,
  );
  out.write(
    `${host.cpus} × ${host.cpu_model}, Node ${host.node}, load average ${host.loadavg_1m.toFixed(1)} before the run\n`,
  );
  // The load at the end includes the bench's own processes; the one before says what else ran.
  if (host.loadavg_1m > host.cpus / 2) {
    out.write('!! The machine was busy with other work when the run began: the figures are noisier than usual.\n');
  }
  out.write('\n');
  out.write(`${renderTable(results)}\n\n`);
  out.write('ratio = value / baseline. Baselines, measured in this same run:\n');
  for (const [name, text] of Object.entries(report.baselines)) out.write(`  • ${name}: ${text}\n`);
  if (skipped.length > 0) {
    out.write('\nSKIPPED:\n');
    for (const entry of skipped) out.write(`  ! ${entry.scenario} ${entry.dialect ?? ''}: ${entry.reason}\n`);
  }
  const missed = results.filter((result) => result.aim && !result.aim.met);
  out.write(`\n${results.filter((r) => r.aim?.met).length} aims met, ${missed.length} missed.\n`);
  out.write(`JSON: ${path}\n`);
}

main().catch((error) => {
  process.stderr.write(`bench failed: ${error?.stack ?? error}\n`);
  process.exitCode = 1;
});
