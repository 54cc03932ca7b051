import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

const DURATION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200];

/**
 * The agent's metrics (docs/observability.md), on a registry of its own: jobs run by type and
 * outcome and how long they took, log bytes shipped, reconnects and claim waits. Labels are the
 * job type and outcome only, never an id.
 */
export class AgentMetrics {
  readonly registry = new Registry();
  private readonly jobs: Counter<'type' | 'outcome'>;
  private readonly durations: Histogram<'type' | 'outcome'>;
  private readonly logBytes: Counter;
  private readonly reconnects: Counter;
  private readonly claimWaits: Histogram;

  constructor(runningJobs: () => number) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.jobs = new Counter({
      name: 'trellis_agent_jobs_total',
      help: 'Jobs this agent ran, by type and outcome (SUCCESS, FAILED, CANCELLED, LOST)',
      labelNames: ['type', 'outcome'],
      registers,
    });
    this.durations = new Histogram({
      name: 'trellis_agent_job_duration_seconds',
      help: 'Time from claim to the final report of the jobs this agent ran, by type and outcome',
      labelNames: ['type', 'outcome'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.logBytes = new Counter({
      name: 'trellis_agent_log_bytes_total',
      help: 'Bytes of job log the control plane took from this agent (UTF-8)',
      registers,
    });
    this.reconnects = new Counter({
      name: 'trellis_agent_reconnects_total',
      help: 'Claims retried because the control plane was unreachable or failed',
      registers,
    });
    this.claimWaits = new Histogram({
      name: 'trellis_agent_claim_wait_seconds',
      help: 'Time a free slot waited (long polls and retries included) before it claimed a job',
      buckets: [0.1, 0.5, 1, 5, 15, 30, 60, 300, 900, 3600],
      registers,
    });
    new Gauge({
      name: 'trellis_agent_running_jobs',
      help: 'Jobs this agent runs now',
      registers,
      collect() {
        this.set(runningJobs());
      },
    });
  }

  jobFinished(type: string, outcome: string, seconds: number): void {
    this.jobs.inc({ type, outcome });
    this.durations.observe({ type, outcome }, seconds);
  }

  logShipped(text: string): void {
    this.logBytes.inc(Buffer.byteLength(text, 'utf8'));
  }

  reconnect(): void {
    this.reconnects.inc();
  }

  claimed(waitSeconds: number): void {
    this.claimWaits.observe(waitSeconds);
  }
}

/**
 * `GET /metrics` of the agent on `port` (`--metrics-port`; 0 picks a free one), every interface:
 * Prometheus scrapes the agent's pod. Anything else is a 404.
 */
export async function serveAgentMetrics(
  registry: Registry,
  port: number,
  host = '0.0.0.0',
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' }).end(text),
      () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics failed\n'),
    );
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => done());
  });
  const { port: bound } = server.address() as AddressInfo;
  return { server, url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics` };
}
