/**
 * `npm run bench` still works: with smoke-test counts, in a child process (as npm runs it, on the
 * built packages), it must write the JSON it promises: first one cheap scenario in detail, then
 * every scenario (`--quick --only … --scale`) on both databases. Only the shape and that figures are
 * positive numbers are checked, never a speed (DESIGN §8: no timed assertions).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('..', import.meta.url));

describe('npm run bench', () => {
  let out: string | undefined;
  afterAll(async () => {
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('measures heartbeats with --quick on SQLite and writes the table as JSON', async () => {
    out = await mkdtemp(join(tmpdir(), 'trellis-bench-smoke-'));
    const { stdout } = await run(
      process.execPath,
      ['bench/run.mjs', '--quick', '--only', 'heartbeats', '--dialect', 'sqlite', '--out', out],
      { cwd: repoRoot, timeout: 120_000 },
    );

    const files = (await readdir(out)).sort();
    expect(files).toHaveLength(2);
    expect(files).toContain('latest.json');
    const report = JSON.parse(await readFile(join(out, 'latest.json'), 'utf8'));
    expect(await readFile(join(out, files.find((file) => file !== 'latest.json') as string), 'utf8')).toBe(
      await readFile(join(out, 'latest.json'), 'utf8'),
    );
    expect(stdout).toContain(join(out, files.find((file) => file !== 'latest.json') as string));

    expect(report).toMatchObject({
      schema: 'trellis-bench/1',
      options: { quick: true, only: ['heartbeats'], dialects: ['sqlite'] },
      skipped: [],
    });
    expect(Object.keys(report)).toEqual(
      expect.arrayContaining(['started_at', 'finished_at', 'duration_s', 'machine', 'baselines', 'results']),
    );
    expect(report.results).toHaveLength(1);
    const [result] = report.results;
    expect(result).toMatchObject({
      scenario: 'heartbeats',
      dialect: 'sqlite',
      unit: '/s',
      better: 'higher',
      baseline: { name: 'bare node:http' },
      aim: { kind: 'ratio_at_least' },
    });
    expect(typeof result.aim.met).toBe('boolean');
    for (const figure of [result.value, result.baseline.value, result.ratio]) {
      expect(Number.isFinite(figure) && figure > 0).toBe(true);
    }
    expect(result.details.trellis.operations).toBeGreaterThan(0);
    expect(report.baselines['bare node:http']).toEqual(expect.any(String));
  }, 150_000);
});

describe('npm run bench -- --quick, every scenario', () => {
  let out: string | undefined;
  afterAll(async () => {
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('runs every scenario on SQLite and Postgres and reports each figure beside its baseline and aim', async () => {
    out = await mkdtemp(join(tmpdir(), 'trellis-bench-smoke-all-'));
    await run(
      process.execPath,
      ['bench/run.mjs', '--quick', '--only', 'claims,heartbeats,logs,sse,uploads,runs,fleet', '--scale', '--out', out],
      {
        cwd: repoRoot,
        timeout: 900_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const report = JSON.parse(await readFile(join(out, 'latest.json'), 'utf8'));
    const scenarios = ['claims', 'heartbeats', 'logs', 'sse', 'uploads', 'scale', 'runs', 'fleet'];
    expect(report.options).toMatchObject({ quick: true, dialects: ['sqlite', 'postgres'] });
    expect([...report.options.only].sort()).toEqual([...scenarios].sort());
    // Nothing skipped: CI has Postgres, and a scenario that cannot run must say so, not vanish.
    expect(report.skipped).toEqual([]);
    for (const scenario of scenarios) {
      const results = report.results.filter((result: { scenario: string }) => result.scenario === scenario);
      expect(results.length, scenario).toBeGreaterThan(0);
      for (const result of results) {
        expect(Number.isFinite(result.value), `${scenario} ${result.metric}`).toBe(true);
        if (result.baseline) expect(result.baseline.value, `${scenario} ${result.metric}`).toBeGreaterThan(0);
        if (result.aim) expect(typeof result.aim.met, `${scenario} ${result.metric}`).toBe('boolean');
      }
    }
    // The database scenarios measure both dialects.
    for (const scenario of ['claims', 'heartbeats', 'logs', 'scale', 'runs', 'fleet']) {
      const dialects = new Set(
        report.results
          .filter((result: { scenario: string }) => result.scenario === scenario)
          .map((result: { dialect: string }) => result.dialect),
      );
      expect(dialects, scenario).toEqual(new Set(['sqlite', 'postgres']));
    }
    // runs: the three flows, each beside the baseline build's rounds (with --quick, this same build).
    const runs = report.results.filter((result: { scenario: string }) => result.scenario === 'runs');
    expect(new Set(runs.map((result: { label: string }) => result.label))).toEqual(
      new Set([
        'runs sqlite PLAN→DEPLOY',
        'runs sqlite one-job DEPLOY',
        'runs sqlite auto-applied run',
        'runs postgres PLAN→DEPLOY',
        'runs postgres one-job DEPLOY',
        'runs postgres auto-applied run',
      ]),
    );
    const metrics = runs.map((result: { metric: string }) => result.metric);
    for (const metric of ['runs per minute', 'plan end → apply start p50', 'server CPU per run', 'agent CPU per run']) {
      expect(metrics, metric).toContain(metric);
    }
    expect(metrics).toContain('Postgres backend CPU per run');
    // The auto-applied run's apply was queued by the server as its plan ended, and measured so.
    const autoApplied = runs.filter((result: { label: string }) => result.label.endsWith('auto-applied run'));
    expect(autoApplied.map((result: { metric: string }) => result.metric)).toContain('plan end → apply start p50');
    for (const result of runs) expect(result.baseline?.name, result.metric).toBe('previous commit');
  }, 960_000);
});
