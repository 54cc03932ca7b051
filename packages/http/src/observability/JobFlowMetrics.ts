import type { Clock } from '@trellis/core';
import { Counter, Histogram, type Registry } from 'prom-client';

/** Jobs remembered between their claim and the agent's first report, at most (oldest dropped). */
const MAX_TRACKED_CLAIMS = 10_000;
const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/**
 * What the agent routes observe as jobs flow: the wait from queue to claim, from claim to the
 * agent's first report (a log chunk or a status), and the log bytes and chunks taken. Labels are
 * the job type only: never a job, worker or owner id.
 */
export class JobFlowMetrics {
  private readonly queueToClaim: Histogram<'type'>;
  private readonly claimToStart: Histogram<'type'>;
  private readonly logBytes: Counter;
  private readonly logChunks: Counter;
  private readonly claimed = new Map<string, { type: string; claimedAt: number }>();

  constructor(
    registry: Registry,
    private readonly clock: Clock,
  ) {
    this.queueToClaim = new Histogram({
      name: 'trellis_job_queue_to_claim_seconds',
      help: 'Time from a job being queued to an agent claiming it',
      labelNames: ['type'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    this.claimToStart = new Histogram({
      name: 'trellis_job_claim_to_start_seconds',
      help: "Time from a job's claim to the agent's first log chunk or status report (claims and reports seen by this replica)",
      labelNames: ['type'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    this.logBytes = new Counter({
      name: 'trellis_log_bytes_ingested_total',
      help: 'Bytes of job log chunks stored (UTF-8)',
      registers: [registry],
    });
    this.logChunks = new Counter({
      name: 'trellis_log_chunks_ingested_total',
      help: 'Job log chunks stored',
      registers: [registry],
    });
  }

  /** An agent claimed `job`. */
  claim(job: { id: string; job_type: string; created_at: string; claimed_at: string | null }): void {
    const claimedAt = job.claimed_at === null ? this.clock.now().getTime() : Date.parse(job.claimed_at);
    this.queueToClaim.observe({ type: job.job_type }, Math.max(0, (claimedAt - Date.parse(job.created_at)) / 1000));
    if (this.claimed.size >= MAX_TRACKED_CLAIMS) {
      const oldest = this.claimed.keys().next().value;
      if (oldest !== undefined) this.claimed.delete(oldest);
    }
    this.claimed.set(job.id, { type: job.job_type, claimedAt });
  }

  /** The agent reported on `jobId` (a log chunk or a status): the first report ends its start wait. */
  report(jobId: string): void {
    const claim = this.claimed.get(jobId);
    if (claim === undefined) return;
    this.claimed.delete(jobId);
    this.claimToStart.observe({ type: claim.type }, Math.max(0, (this.clock.now().getTime() - claim.claimedAt) / 1000));
  }

  /** A log chunk of `text` was stored. */
  logChunk(text: string): void {
    this.logChunks.inc();
    this.logBytes.inc(Buffer.byteLength(text, 'utf8'));
  }
}
