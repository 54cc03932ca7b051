import { randomBytes } from 'node:crypto';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { type RunningControlPlane, startControlPlane, vineyardWithConfiguration } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

// What an embedder or the OTLP setup does: a global provider, its context manager and propagator.
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();

const CALLER_SPAN = 'b7ad6b7169203331';
/** A trace id of its own per request: the exporter holds the spans of every suite of the file. */
const newTraceId = () => randomBytes(16).toString('hex');

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** The spans of one trace once its request span has ended. */
async function traceOf(traceId: string, requestSpanName: string): Promise<ReadableSpan[]> {
  return vi.waitFor(
    () => {
      const spans = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
      if (!spans.some((span) => span.name === requestSpanName)) throw new Error(`no ${requestSpanName} yet`);
      return spans;
    },
    { timeout: 10_000, interval: 20 },
  );
}

describeEachDialect('traces of a request', (dialect) => {
  let server: RunningControlPlane;

  beforeAll(async () => {
    server = await startControlPlane(dialect);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('go request → use case → store, under the caller traceparent, with the request id', async () => {
    const user = await server.userClient('traces@example.com');
    const agent = await server.agentClient(user, 'traced');
    const { configuration } = await vineyardWithConfiguration(user, 'traced');
    await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const callerTrace = newTraceId();
    const headers = {
      'X-Worker-ID': agent.workerId,
      'X-Worker-Token': agent.workerToken,
      traceparent: `00-${callerTrace}-${CALLER_SPAN}-01`,
    };
    const claim = await fetch(`${server.url}/api/jobs/claim`, { method: 'POST', headers });
    expect(claim.status).toBe(200);
    const { job } = (await claim.json()) as { job: { id: string } };

    const spans = await traceOf(callerTrace, 'POST /api/jobs/claim');
    const request = spans.find((span) => span.name === 'POST /api/jobs/claim') as ReadableSpan;
    expect(parentOf(request)).toBe(CALLER_SPAN);
    expect(request.attributes['http.route']).toBe('/api/jobs/claim');
    expect(request.attributes['http.response.status_code']).toBe(200);
    expect(request.attributes['trellis.request_id']).toBe(claim.headers.get('x-request-id'));
    expect(request.attributes['trellis.job_id']).toBe(job.id);
    const useCase = spans.find((span) => span.name === 'usecase jobs.claim') as ReadableSpan;
    expect(useCase).toBeDefined();
    expect(parentOf(useCase)).toBe(request.spanContext().spanId);
    const stores = spans.filter((span) => span.name.startsWith('store '));
    expect(stores.filter((span) => parentOf(span) === useCase.spanContext().spanId).length).toBeGreaterThan(0);
    // Every store call is under a use case of the request (the worker's authentication is one too).
    const useCaseIds = spans
      .filter((span) => span.name.startsWith('usecase '))
      .map((span) => span.spanContext().spanId);
    for (const store of stores) expect(useCaseIds).toContain(parentOf(store));
    for (const id of useCaseIds) {
      const span = spans.find((candidate) => candidate.spanContext().spanId === id) as ReadableSpan;
      expect(parentOf(span)).toBe(request.spanContext().spanId);
    }

    // A JSON body is read by stream callbacks; the handler still runs in the request's trace.
    const logTrace = newTraceId();
    const logged = await fetch(`${server.url}/api/jobs/${job.id}/logs`, {
      method: 'POST',
      headers: { ...headers, traceparent: `00-${logTrace}-${CALLER_SPAN}-01`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ log_chunk: 'hello\n', stream_type: 'STDOUT' }),
    });
    expect(logged.status).toBe(201);
    const logSpans = await traceOf(logTrace, 'POST /api/jobs/:id/logs');
    const logRequest = logSpans.find((span) => span.name === 'POST /api/jobs/:id/logs') as ReadableSpan;
    const append = logSpans.find((span) => span.name === 'usecase logs.append') as ReadableSpan;
    expect(parentOf(append)).toBe(logRequest.spanContext().spanId);
    expect(
      logSpans.some((span) => span.name.startsWith('store ') && parentOf(span) === append.spanContext().spanId),
    ).toBe(true);
    // Span names carry route templates, never the job id.
    for (const span of logSpans) expect(span.name).not.toContain(job.id);
  });
});
