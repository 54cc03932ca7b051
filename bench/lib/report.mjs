/** The bench's output: one table on stdout and the same figures as JSON. */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';

/**
 * An aim is a least ratio to the baseline (throughput), a most ratio (a cost that must stay flat
 * as the data grows) or a bound on the value itself (latency, memory); `met` is decided here so the table and the JSON agree.
 */
export const aims = {
  ratioAtLeast: (least, text) => ({ kind: 'ratio_at_least', target: least, text }),
  /** A most ratio to the baseline: a cost (time) that may grow only so much over its baseline. */
  ratioAtMost: (most, text) => ({ kind: 'ratio_at_most', target: most, text }),
  valueBelow: (bound, text) => ({ kind: 'value_below', target: bound, text }),
};

/**
 * One measured figure beside its baseline. `ratio` is value / baseline: above 1 the control plane
 * is faster (rates) or slower (latencies, memory) than the baseline; `better` says which applies.
 */
export function figure({
  scenario,
  dialect = null,
  label,
  metric,
  unit,
  value,
  baseline,
  better,
  aim = null,
  details,
}) {
  const ratio = baseline && baseline.value > 0 ? value / baseline.value : null;
  let met = null;
  if (aim?.kind === 'ratio_at_least') met = ratio !== null && ratio >= aim.target;
  if (aim?.kind === 'ratio_at_most') met = ratio !== null && ratio <= aim.target;
  if (aim?.kind === 'value_below') met = value < aim.target;
  return {
    scenario,
    dialect,
    label,
    metric,
    unit,
    value,
    baseline,
    ratio,
    better,
    aim: aim ? { ...aim, met } : null,
    details: details ?? {},
  };
}

function formatNumber(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  const magnitude = Math.abs(value);
  if (magnitude >= 100) return Math.round(value).toLocaleString('en-US');
  if (magnitude >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

function pad(text, width, right = false) {
  const length = [...text].length;
  if (length >= width) return text;
  return right ? ' '.repeat(width - length) + text : text + ' '.repeat(width - length);
}

/** The table: scenario, metric, value, baseline (and what it is), ratio, aim, ✓/✗. */
export function renderTable(results) {
  const rows = results.map((result) => [
    result.label,
    `${result.metric} (${result.unit})`,
    formatNumber(result.value),
    result.baseline ? formatNumber(result.baseline.value) : '—',
    result.baseline ? result.baseline.name : '—',
    result.ratio === null ? '—' : `${result.ratio.toFixed(2)}×`,
    result.aim ? result.aim.text : '—',
    result.aim ? (result.aim.met ? '✓' : '✗') : '',
  ]);
  const header = ['scenario', 'metric', 'value', 'baseline', 'baseline is', 'ratio', 'aim', ''];
  const numeric = [false, false, true, true, false, true, false, false];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => [...row[column]].length)));
  const line = (cells) =>
    cells
      .map((cell, column) => pad(cell, widths[column], numeric[column]))
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '─'.repeat(width)).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}

export function machine() {
  const cores = cpus();
  return {
    cpus: cores.length,
    cpu_model: cores[0]?.model ?? 'unknown',
    memory_bytes: totalmem(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    loadavg_1m: loadavg()[0],
  };
}

/** The 1-minute load average: other work on the machine makes every figure noisier. */
export function currentLoad() {
  return loadavg()[0];
}

/** Writes `<dir>/<timestamp>.json` and `<dir>/latest.json`; returns the first path. */
export async function writeJson(dir, report) {
  await mkdir(dir, { recursive: true });
  const stamp = report.started_at.replace(/[:.]/g, '-');
  const path = join(dir, `${stamp}.json`);
  const text = `${JSON.stringify(report, null, 2)}\n`;
  await writeFile(path, text);
  await writeFile(join(dir, 'latest.json'), text);
  return path;
}
