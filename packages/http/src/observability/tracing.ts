import {
  type Context,
  context,
  ProxyTracerProvider,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { UseCases } from '@trellis/core';
import type { RequestHandler, Response } from 'express';
import { routeTemplate } from './routeTemplate.js';

/**
 * Traces of the HTTP layer (docs/observability.md "Traces"). Everything here goes through the
 * OpenTelemetry API only: without a tracer provider (no `OTEL_EXPORTER_OTLP_ENDPOINT`) every
 * span is a no-op.
 */
const tracer = trace.getTracer('@trellis/http');
const CONTEXT = 'trellisTraceContext';

/** What the API answers with while no tracer provider is registered: spans that record nothing. */
const NO_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * Whether a tracer provider is registered. Asked per request (an embedder may register one after
 * the API was made), so that without one a request makes no no-op spans, contexts or listeners:
 * profiled, those were 1–2% of an agent request's CPU.
 */
function tracing(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NO_PROVIDER;
}

/**
 * After the request id: one server span per request, a child of the caller's `traceparent` if it
 * sent one, named by the route template once the answer is sent.
 */
export const traceRequests: RequestHandler = (req, res, next) => {
  if (!tracing()) {
    next();
    return;
  }
  const parent = propagation.extract(context.active(), req.headers);
  const requestId = res.getHeader('X-Request-Id');
  const span = tracer.startSpan(
    `${req.method}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': req.method,
        ...(typeof requestId === 'string' ? { 'trellis.request_id': requestId } : {}),
      },
    },
    parent,
  );
  const active = trace.setSpan(parent, span);
  res.locals[CONTEXT] = active;
  res.on('close', () => {
    const route = routeTemplate(req, res);
    span.updateName(`${req.method} ${route}`);
    span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode });
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  context.with(active, next);
};

/**
 * Runs `work` in the request's trace context: a body parser's stream callbacks lose the context
 * the request started in, so the route handler enters it again.
 */
export function inRequestTrace<T>(res: Response, work: () => T): T {
  const active = res.locals[CONTEXT] as Context | undefined;
  return active === undefined ? work() : context.with(active, work);
}

/** Names the job a request acted on, on its span (`trellis.job_id`, as the agent's job span has it). */
export function traceJobId(jobId: string): void {
  trace.getActiveSpan()?.setAttribute('trellis.job_id', jobId);
}

/** The same use cases, each call a span `usecase <area>.<method>` (its store calls its children). */
export function tracedUseCases(useCases: UseCases): UseCases {
  const traced: Partial<Record<keyof UseCases, object>> = {};
  for (const area of Object.keys(useCases) as (keyof UseCases)[]) {
    traced[area] = traceArea(area, useCases[area]);
  }
  return traced as UseCases;
}

function traceArea<A extends object>(area: string, target: A): A {
  // One wrapper per method, made on first use: a call costs no new closure or span name.
  const wrappers = new Map<string, { method: unknown; wrapper: Method }>();
  return new Proxy(target, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      const known = wrappers.get(property);
      if (known?.method === value) return known.wrapper;
      const wrapper = traceMethod(`usecase ${area}.${property}`, object, value as Method);
      wrappers.set(property, { method: value, wrapper });
      return wrapper;
    },
  });
}

type Method = (...args: unknown[]) => unknown;

function traceMethod(name: string, object: object, value: Method): Method {
  return (...args: unknown[]) => {
    if (!tracing()) return value.apply(object, args);
    return tracer.startActiveSpan(name, (span) => {
      let result: unknown;
      try {
        result = value.apply(object, args);
      } catch (error) {
        failed(span);
        span.end();
        throw error;
      }
      if (!(result instanceof Promise)) {
        span.end();
        return result;
      }
      return result.then(
        (answer) => {
          span.end();
          return answer;
        },
        (error: unknown) => {
          failed(span);
          span.end();
          throw error;
        },
      );
    });
  };
}

/** The error's message may name what the caller sent: the status alone says the call failed. */
function failed(span: Span): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
}
