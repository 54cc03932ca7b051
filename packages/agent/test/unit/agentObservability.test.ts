import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { TrellisClient } from '@trellis/client';
import type { ClaimedJob, Job } from '@trellis/core';
import { parsePrometheusText, sampleValue } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/daemon/Agent.js';
import type { JobOutcome, JobRunner } from '../../src/job/JobRunner.js';
import { AgentLogger } from '../../src/logging/AgentLogger.js';
import { AgentMetrics } from '../../src/observability/AgentMetrics.js';
import { tracedFetch } from '../../src/observability/tracing.js';
import { ManualClock } from '../support/manualClock.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();

describe('the agent job span and metrics', () => {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.end('ok');
  });
  let url = '';

  beforeAll(async () => {
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/jobs/job-1/logs`;
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
  });

  it('runs a job in a span named by its type, sent as traceparent on its requests, and counts it', async () => {
    const claimed = { job: { id: 'job-1', job_type: 'PLAN' } as Job, cloud_identity: null } as ClaimedJob;
    let claims = 0;
    const client = {
      baseUrl: 'http://control-plane.test',
      heartbeat: async () => ({ cancel_job_ids: [], heartbeat_interval_s: 30 }),
      claimJob: async () => {
        claims += 1;
        if (claims === 1) throw new Error('connection refused');
        return claimed;
      },
    };
    const clock = new ManualClock();
    const metrics = new AgentMetrics(() => agent.runningJobs);
    const agent = new Agent({
      clock,
      client: client as unknown as TrellisClient,
      logger: new AgentLogger('silent'),
      concurrency: 1,
      once: true,
      claimWaitS: 30,
      heartbeatIntervalS: 60,
      createRunner: () =>
        ({
          run: async (): Promise<JobOutcome> => {
            await (await tracedFetch(url, { method: 'POST' })).text();
            return 'SUCCESS';
          },
          stop: () => {},
        }) as unknown as JobRunner,
      metrics,
    });
    const running = agent.run();
    // The failed claim waits for its backoff on the manual clock.
    while (claims < 2) {
      await new Promise((resolve) => setImmediate(resolve));
      clock.advance(1000);
    }
    expect((await running).outcomes).toEqual(['SUCCESS']);

    const span = exporter.getFinishedSpans().find((candidate) => candidate.name === 'job PLAN');
    if (!span) throw new Error('no job span');
    expect(span.attributes).toMatchObject({
      'trellis.job_id': 'job-1',
      'trellis.job_type': 'PLAN',
      'trellis.job_outcome': 'SUCCESS',
    });
    const { traceId, spanId } = span.spanContext();
    expect(seen.at(-1)?.traceparent).toBe(`00-${traceId}-${spanId}-01`);

    const scraped = parsePrometheusText(await metrics.registry.metrics());
    expect(sampleValue(scraped, 'trellis_agent_jobs_total', { type: 'PLAN', outcome: 'SUCCESS' })).toBe(1);
    expect(sampleValue(scraped, 'trellis_agent_job_duration_seconds_count', { type: 'PLAN', outcome: 'SUCCESS' })).toBe(
      1,
    );
    expect(sampleValue(scraped, 'trellis_agent_reconnects_total')).toBe(1);
    expect(sampleValue(scraped, 'trellis_agent_claim_wait_seconds_count')).toBe(1);
    expect(sampleValue(scraped, 'trellis_agent_claim_wait_seconds_sum')).toBeGreaterThan(0);
    expect(sampleValue(scraped, 'trellis_agent_running_jobs')).toBe(0);
  });

  it('sends no traceparent outside a span', async () => {
    await (await tracedFetch(url)).text();
    expect(seen.at(-1)?.traceparent).toBeUndefined();
  });
});
