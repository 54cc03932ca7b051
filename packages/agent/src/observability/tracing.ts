import { context, propagation, trace } from '@opentelemetry/api';

/** The agent's tracer: a no-op unless a provider is registered (`startAgentTracing`). */
export const agentTracer = trace.getTracer('@trellis/agent');

/**
 * `fetch` that sends the active trace context as W3C `traceparent`, so the control plane's
 * request spans of a job are children of the agent's job span.
 */
export const tracedFetch: typeof fetch = (input, init) => {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  if (Object.keys(carrier).length === 0) return fetch(input, init);
  const headers = new Headers(init?.headers);
  for (const [name, value] of Object.entries(carrier)) headers.set(name, value);
  return fetch(input, { ...init, headers });
};

/**
 * Traces off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set; then spans go, batched, to that
 * OTLP/HTTP endpoint. Returns what flushes and stops the provider. The SDK and the exporter are
 * loaded only then: an agent without traces keeps only `@opentelemetry/api`'s no-op tracer (issue 31).
 */
export async function startAgentTracing(
  env: NodeJS.ProcessEnv,
  version: string,
): Promise<(() => Promise<void>) | null> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT) return null;
  const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BatchSpanProcessor }, { NodeTracerProvider }] =
    await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/sdk-trace-node'),
    ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'trellis-agent', 'service.version': version }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: otlpTracesUrl(env.OTEL_EXPORTER_OTLP_ENDPOINT) })),
    ],
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
