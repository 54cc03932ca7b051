import type { OperationalSnapshot } from '@trellis/core';
import { FakeClock, parsePrometheusText, sampleValue } from '@trellis/testkit';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ApiMetrics } from '../src/observability/ApiMetrics.js';

function snapshotOf(queueDepth: number): OperationalSnapshot {
  return {
    jobs: [{ type: 'PLAN', status: 'QUEUED', count: queueDepth }],
    queueDepth,
    oldestQueuedSeconds: 12,
    workers: { online: 1, busy: 2, offline: 3 },
    outboxBacklog: 4,
    outboxBacklogByKind: { notification: 3, vcs_feedback: 1 },
  };
}

describe('the database gauges of /metrics', () => {
  it('read the database once for the scrapes of one second, then again', async () => {
    const clock = new FakeClock(new Date('2026-01-01T00:00:00Z'));
    let reads = 0;
    const metrics = new ApiMetrics({
      registry: new Registry(),
      clock,
      snapshot: async () => snapshotOf(++reads),
    });
    const scrape = async () => parsePrometheusText(await metrics.registry.metrics());
    expect(sampleValue(await scrape(), 'trellis_job_queue_depth')).toBe(1);
    expect(sampleValue(await scrape(), 'trellis_jobs', { type: 'PLAN', status: 'QUEUED' })).toBe(1);
    expect(reads).toBe(1);
    clock.advance({ seconds: 1 });
    const later = await scrape();
    expect(reads).toBe(2);
    expect(sampleValue(later, 'trellis_job_queue_depth')).toBe(2);
    expect(sampleValue(later, 'trellis_agents', { status: 'busy' })).toBe(2);
    expect(sampleValue(later, 'trellis_agents', { status: 'offline' })).toBe(3);
    expect(sampleValue(later, 'trellis_outbox_backlog')).toBe(4);
    expect(sampleValue(later, 'trellis_outbox_backlog_by_kind', { kind: 'notification' })).toBe(3);
    expect(sampleValue(later, 'trellis_outbox_backlog_by_kind', { kind: 'vcs_feedback' })).toBe(1);
  });

  it('keep their last values when the database cannot be read, and the scrape still answers', async () => {
    const clock = new FakeClock(new Date('2026-01-01T00:00:00Z'));
    let failing = false;
    let depth = 7;
    const metrics = new ApiMetrics({
      registry: new Registry(),
      clock,
      snapshot: async () => {
        if (failing) throw new Error('database unavailable');
        return snapshotOf(depth);
      },
    });
    const scrape = async () => parsePrometheusText(await metrics.registry.metrics());
    expect(sampleValue(await scrape(), 'trellis_job_queue_depth')).toBe(7);
    failing = true;
    depth = 8;
    clock.advance({ seconds: 2 });
    expect(sampleValue(await scrape(), 'trellis_job_queue_depth')).toBe(7);
    failing = false;
    // A failed read is not kept: the next scrape reads again, within the same second too.
    const after = await scrape();
    expect(sampleValue(after, 'trellis_job_queue_depth')).toBe(8);
    expect(sampleValue(after, 'trellis_metrics_snapshot_failures_total')).toBe(1);
  });
});
