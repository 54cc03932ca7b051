/** Closed-loop load: a fixed number of lanes, each sending its next operation when the last ended. */
import { cpuSecondsOf } from './processes.mjs';

/**
 * Runs `operation(lane, index)` from `concurrency` lanes until `count` operations were started or
 * `seconds` have passed, whichever comes first (so every loop is bounded by count AND time).
 * An operation that returns `false` found nothing to do: its lane stops and it is not counted.
 * Returns how many completed, over how long, and the rate.
 */
export async function runClosedLoop({ concurrency, count, seconds, operation }) {
  let started = 0;
  let completed = 0;
  const begin = performance.now();
  const deadline = begin + seconds * 1000;
  async function lane(laneIndex) {
    while (started < count && performance.now() < deadline) {
      const index = started++;
      if ((await operation(laneIndex, index)) === false) return;
      completed += 1;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, (_, laneIndex) => lane(laneIndex)));
  const elapsed = (performance.now() - begin) / 1000;
  return {
    operations: completed,
    seconds: elapsed,
    perSecond: completed / elapsed,
    stoppedByTime: started < count,
  };
}

/**
 * A short warm-up (JIT, connections, caches: at most `warmup` operations or 1 s, not counted),
 * then the measured closed loop. With `serverPid`, the result also holds the CPU milliseconds
 * that process spent per operation during the measured loop.
 */
export async function measureAfterWarmup({ concurrency, warmup, count, seconds, operation, serverPid }) {
  await runClosedLoop({ concurrency, count: warmup, seconds: Math.min(1, seconds / 3), operation });
  const cpuBefore = serverPid === undefined ? null : cpuSecondsOf(serverPid);
  const result = await runClosedLoop({ concurrency, count, seconds, operation });
  const cpuAfter = serverPid === undefined ? null : cpuSecondsOf(serverPid);
  if (cpuBefore === null || cpuAfter === null || result.operations === 0) return result;
  return { ...result, serverCpuMsPerOperation: ((cpuAfter - cpuBefore) * 1000) / result.operations };
}

/** The p-th percentile (0..100) of `values`, nearest-rank; null when there are none. */
export function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
