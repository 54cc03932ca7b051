import { randomBytes } from 'node:crypto';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningControlPlane, startControlPlane } from './support/controlPlane.js';

// Without a provider, requests make no spans at all; one registered later (an embedder that sets
// up OpenTelemetry after the control plane) is used from the next request on. The HTTP layer
// decides this, whatever the database: one dialect, since a provider is registered once per process.
describe('traces with a tracer provider registered after start', () => {
  let server: RunningControlPlane;
  const exporter = new InMemorySpanExporter();

  beforeAll(async () => {
    server = await startControlPlane('sqlite');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('trace the requests after the provider is registered, under the caller traceparent', async () => {
    const user = await server.userClient('late-traces@example.com');
    const agent = await server.agentClient(user, 'late');
    const headers = { 'X-Worker-ID': agent.workerId, 'X-Worker-Token': agent.workerToken };
    const untraced = await fetch(`${server.url}/api/jobs/claim`, { method: 'POST', headers });
    expect(untraced.status).toBe(204);

    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register();
    const callerTrace = randomBytes(16).toString('hex');
    const traced = await fetch(`${server.url}/api/jobs/claim`, {
      method: 'POST',
      headers: { ...headers, traceparent: `00-${callerTrace}-b7ad6b7169203331-01` },
    });
    expect(traced.status).toBe(204);
    const spans = await vi.waitFor(
      () => {
        const found = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === callerTrace);
        if (!found.some((span) => span.name === 'POST /api/jobs/claim')) throw new Error('no request span yet');
        return found;
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(spans.map((span) => span.name)).toContain('usecase jobs.claim');
    // Only the request made after registering was traced.
    const requests = exporter.getFinishedSpans().filter((span) => span.name === 'POST /api/jobs/claim');
    expect(requests).toHaveLength(1);
  });
});
