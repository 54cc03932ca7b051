import type { Clock, EventBus, OperationalStats, TrellisEvent } from '@trellis/core';
import { OperationsUseCases } from '@trellis/core';
import { ApiMetrics } from '@trellis/http';
import type { PoolStats } from '@trellis/store-sql';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ServerConfig } from './config.js';

export interface MetricsSources {
  clock: Clock;
  operationalStats: OperationalStats;
  poolStats: () => PoolStats;
  heartbeatTimeoutSeconds: number;
}

/**
 * The control plane's own registry (two control planes in one process do not mix), or null when
 * metrics are off (neither `TRELLIS_METRICS_TOKEN` nor `TRELLIS_METRICS_PORT`).
 */
export function metricsRegistry(config: ServerConfig): Registry | null {
  return config.metrics.token === null && config.metrics.port === null ? null : new Registry();
}

/** The metrics of the HTTP layer and the database pool, on `registry`. */
export function createMetrics(registry: Registry, sources: MetricsSources): ApiMetrics {
  const operations = new OperationsUseCases(sources.operationalStats, sources.clock, sources.heartbeatTimeoutSeconds);
  const metrics = new ApiMetrics({ registry, clock: sources.clock, snapshot: () => operations.snapshot() });
  new Gauge({
    name: 'trellis_db_pool_connections',
    help: 'Database pool connections by state: used (lent to a unit of work), free, pending (waited for)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const pool = sources.poolStats();
      this.set({ state: 'used' }, pool.used);
      this.set({ state: 'free' }, pool.free);
      this.set({ state: 'pending' }, pool.pendingAcquires);
    },
  });
  new Counter({
    name: 'trellis_db_pool_acquires_total',
    help: 'Database connections lent from the pool',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(sources.poolStats().acquires);
    },
  });
  new Counter({
    name: 'trellis_db_pool_acquire_wait_seconds_total',
    help: 'Seconds spent waiting for a database connection, summed (divide by trellis_db_pool_acquires_total)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(sources.poolStats().acquireWaitSeconds);
    },
  });
  return metrics;
}

/** Events published here and not yet heard back, at most (the oldest are forgotten). */
const MAX_PENDING_EVENTS = 10_000;

/**
 * The event bus, timed: an event this replica publishes is timed until the bus delivers it back
 * to this replica's subscribers (on Postgres a NOTIFY's round trip), as
 * `trellis_event_bus_delay_seconds` by event type.
 */
export function meteredEventBus(bus: EventBus, registry: Registry): EventBus {
  const delay = new Histogram({
    name: 'trellis_event_bus_delay_seconds',
    help: 'Time from publishing an event to its delivery to this replica, by event type',
    labelNames: ['type'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const published = new Map<string, number>();
  const key = (event: TrellisEvent) => JSON.stringify(event);
  bus.subscribe((event) => {
    const id = key(event);
    const at = published.get(id);
    if (at === undefined) return;
    published.delete(id);
    delay.observe({ type: event.type }, (performance.now() - at) / 1000);
  });
  return {
    publish(event) {
      if (published.size >= MAX_PENDING_EVENTS) {
        const oldest = published.keys().next().value;
        if (oldest !== undefined) published.delete(oldest);
      }
      published.set(key(event), performance.now());
      return bus.publish(event);
    },
    subscribe: (listener) => bus.subscribe(listener),
    close: () => bus.close(),
  };
}

/**
 * Traces (docs/observability.md): off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set; then spans
 * go, batched, to its OTLP/HTTP endpoint (the exporter reads the standard `OTEL_*` variables).
 * The provider becomes the process's global one. Returns what flushes and stops it. The SDK and
 * the exporter (some 300 modules, `@opentelemetry/sdk-metrics` among them) are loaded only then:
 * a server without traces keeps only `@opentelemetry/api`'s no-op tracer in memory (issue 31).
 */
export async function startTracing(
  config: ServerConfig,
  serviceName: string,
  version: string,
): Promise<(() => Promise<void>) | null> {
  if (config.otlpEndpoint === null) return null;
  const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BatchSpanProcessor }, { NodeTracerProvider }] =
    await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/sdk-trace-node'),
    ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'service.version': version }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: otlpTracesUrl(config.otlpEndpoint) }))],
  });
  provider.register();
  return () => provider.shutdown();
}

/**
 * Where OTLP/HTTP traces go for the base endpoint `OTEL_EXPORTER_OTLP_ENDPOINT` (the spec's
 * `<endpoint>/v1/traces`), passed explicitly since the variable may come from a given environment
 * rather than `process.env`.
 */
export function otlpTracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}
