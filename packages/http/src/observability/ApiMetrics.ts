import { JOB_STATUSES, JOB_TYPES, type Clock, type OperationalSnapshot, OUTBOX_KINDS } from '@trellis/core';
import type { RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ClaimLongPolls } from '../limits/ClaimLongPolls.js';
import type { LiveLogStreams } from '../realtime/LiveLogStreams.js';
import { JobFlowMetrics } from './JobFlowMetrics.js';
import { routeTemplate } from './routeTemplate.js';

/** How long one database snapshot serves scrapes (several Prometheus servers, or retries). */
const SNAPSHOT_TTL_MS = 1000;

export interface ApiMetricsOptions {
  /** The control plane's own registry (never prom-client's global one). */
  registry: Registry;
  clock: Clock;
  /** The gauges read from the database, computed when scraped (`OperationsUseCases.snapshot`). */
  snapshot: () => Promise<OperationalSnapshot>;
}

/**
 * The HTTP layer's metrics (docs/observability.md): request durations by route template, the job
 * flow, and the gauges computed when Prometheus scrapes.
 */
export class ApiMetrics {
  readonly registry: Registry;
  readonly jobFlow: JobFlowMetrics;
  private readonly requestDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly snapshotFailures: Counter;
  private cached: { at: number; value: Promise<OperationalSnapshot> } | null = null;

  constructor(private readonly options: ApiMetricsOptions) {
    const registry = options.registry;
    this.registry = registry;
    collectDefaultMetrics({ register: registry });
    this.jobFlow = new JobFlowMetrics(registry, options.clock);
    this.requestDuration = new Histogram({
      name: 'trellis_http_request_duration_seconds',
      help: 'HTTP requests by method, route template (`unmatched` for no route) and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    this.snapshotFailures = new Counter({
      name: 'trellis_metrics_snapshot_failures_total',
      help: 'Reads of the database gauges that failed (those gauges keep their last values)',
      registers: [registry],
    });
    // A database that cannot be read leaves its gauges as they were: the scrape still answers.
    const snapshot = async (): Promise<OperationalSnapshot | null> => {
      try {
        return await this.snapshot();
      } catch {
        return null;
      }
    };
    new Gauge({
      name: 'trellis_jobs',
      help: 'Jobs by type and status, every owner',
      labelNames: ['type', 'status'],
      registers: [registry],
      async collect() {
        const taken = await snapshot();
        if (taken === null) return;
        const counts = new Map(taken.jobs.map((row) => [`${row.type} ${row.status}`, row.count]));
        for (const type of JOB_TYPES) {
          for (const status of JOB_STATUSES) this.set({ type, status }, counts.get(`${type} ${status}`) ?? 0);
        }
      },
    });
    new Gauge({
      name: 'trellis_job_queue_depth',
      help: 'Jobs queued and not yet claimed',
      registers: [registry],
      async collect() {
        const taken = await snapshot();
        if (taken !== null) this.set(taken.queueDepth);
      },
    });
    new Gauge({
      name: 'trellis_job_queue_oldest_age_seconds',
      help: 'How long the oldest queued job has waited (0: none waits)',
      registers: [registry],
      async collect() {
        const taken = await snapshot();
        if (taken !== null) this.set(taken.oldestQueuedSeconds);
      },
    });
    new Gauge({
      name: 'trellis_agents',
      help: 'Agents (workers not destroyed) by status: online, busy (running a job) or offline',
      labelNames: ['status'],
      registers: [registry],
      async collect() {
        const taken = await snapshot();
        if (taken === null) return;
        const { workers } = taken;
        this.set({ status: 'online' }, workers.online);
        this.set({ status: 'busy' }, workers.busy);
        this.set({ status: 'offline' }, workers.offline);
      },
    });
    new Gauge({
      name: 'trellis_outbox_backlog',
      help: 'Notification deliveries and git provider feedback waiting to be sent',
      registers: [registry],
      async collect() {
        const taken = await snapshot();
        if (taken !== null) this.set(taken.outboxBacklog);
      },
    });
    new Gauge({
      name: 'trellis_outbox_backlog_by_kind',
      help: 'Outbox rows waiting to be sent by kind: notification (deliveries), vcs_feedback (git provider feedback)',
      labelNames: ['kind'],
      registers: [registry],
      async collect() {
        const taken = await snapshot();
        if (taken === null) return;
        for (const kind of OUTBOX_KINDS) this.set({ kind }, taken.outboxBacklogByKind[kind]);
      },
    });
  }

  /** Open claim long polls and live-log streams of this process, read when scraped. */
  watch(longPolls: ClaimLongPolls, logStreams: LiveLogStreams): void {
    new Gauge({
      name: 'trellis_claim_long_polls_open',
      help: 'Claim long polls (`POST /api/jobs/claim?wait=N`) this replica holds open',
      registers: [this.registry],
      collect() {
        this.set(longPolls.count());
      },
    });
    new Gauge({
      name: 'trellis_live_log_streams_open',
      help: 'Live-log event streams this replica holds open',
      registers: [this.registry],
      collect() {
        this.set(logStreams.stats().open);
      },
    });
  }

  /** The first middleware: times every request, labelled by the route template it matched. */
  readonly timeRequests: RequestHandler = (req, res, next) => {
    const started = performance.now();
    res.on('finish', () => {
      this.requestDuration.observe(
        { method: req.method, route: routeTemplate(req, res), status: String(res.statusCode) },
        (performance.now() - started) / 1000,
      );
    });
    next();
  };

  private snapshot(): Promise<OperationalSnapshot> {
    const now = this.options.clock.now().getTime();
    if (this.cached === null || now - this.cached.at >= SNAPSHOT_TTL_MS || now < this.cached.at) {
      const value = this.options.snapshot();
      // A failed read is not kept: the next scrape tries again.
      value.catch(() => {
        this.snapshotFailures.inc();
        if (this.cached?.value === value) this.cached = null;
      });
      this.cached = { at: now, value };
    }
    return this.cached.value;
  }
}
