import { type Clock, type RateLimitStore, ValidationError } from '@trellis/core';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { z } from 'zod';
import { type AuthDeps, authenticate } from '../auth/authenticate.js';
import { problem, sendProblem } from '../errors/problem.js';
import { SharedRateLimitStore } from '../limits/SharedRateLimitStore.js';
import { humanIssueMessage } from './issueMessages.js';
import { setRouteTemplate } from '../observability/routeTemplate.js';
import { inRequestTrace } from '../observability/tracing.js';
import { requestContext } from './requestContext.js';
import type { RouteSpec } from './route.js';

const DEFAULT_BODY_LIMIT = 1024 * 1024;

function parse<T>(schema: z.ZodType<T> | undefined, value: unknown, where: string): T {
  if (!schema) return value as T;
  const result = schema.safeParse(value, { error: humanIssueMessage });
  if (result.success) return result.data;
  const fields = result.error.issues.map((issue) => ({
    path: [where, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  // The detail names each field as a person wrote it (`drift_detection.interval_minutes`), once.
  const lines = result.error.issues.map(
    (issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : where} ${issue.message}`,
  );
  throw new ValidationError([...new Set(lines)].join('; '), fields);
}

/** DESIGN §4: JSON endpoints refuse text/plain and form bodies (which browsers send cross-site). */
const requireJson: RequestHandler = (req, res, next) => {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is('application/json')) {
    sendProblem(res, problem(415, 'unsupported_media_type', 'the request body must be application/json'));
    return;
  }
  next();
};

/** Where the routes' rate-limit counters live (shared by the replicas when it is the database). */
export interface RateLimitCounters {
  store: RateLimitStore;
  clock: Clock;
}

function limiter(
  route: RouteSpec,
  spec: NonNullable<RouteSpec['rateLimit']>,
  counters: RateLimitCounters,
): RequestHandler {
  return rateLimit({
    windowMs: spec.windowSeconds * 1000,
    limit: spec.limit,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    store: new SharedRateLimitStore(counters.store, counters.clock, `route:${route.operationId}:`),
    handler: (req, res, _next, options) => {
      const resetTime = (req as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const seconds = resetTime ? Math.ceil((resetTime.getTime() - counters.clock.now().getTime()) / 1000) : 0;
      res.setHeader('Retry-After', String(seconds > 0 ? seconds : Math.ceil(options.windowMs / 1000)));
      sendProblem(res, problem(429, 'rate_limited', 'too many requests; slow down and retry later'));
    },
  });
}

/** `/api/jobs/{id}` → `/api/jobs/:id`. */
function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/** Adds each route with its authentication, body parsing, validation and result writing. */
export function mountRoutes(router: Router, routes: RouteSpec[], auth: AuthDeps, counters: RateLimitCounters): void {
  for (const route of routes) {
    const template = expressPath(route.path);
    // The template labels the request's metrics and names its span (never the raw path).
    const chain: RequestHandler[] = [
      (_req, res, next) => {
        setRouteTemplate(res, template);
        next();
      },
    ];
    if (route.rateLimit) chain.push(limiter(route, route.rateLimit, counters));
    chain.push(authenticate(route.auth, auth));
    // `binary` and `raw` bodies stream to their handler (a signature is over the raw bytes).
    if (route.body && route.body !== 'binary' && route.body !== 'raw') {
      chain.push(requireJson, express.json({ limit: route.bodyLimit ?? DEFAULT_BODY_LIMIT, strict: false }));
    }
    const handle = async (req: Request, res: Response) => {
      const body =
        route.body === 'binary' || route.body === 'raw' ? undefined : parse(route.body, req.body ?? {}, 'body');
      const result = await route.handler({
        req,
        res,
        params: parse(route.params, req.params, 'path'),
        query: parse(route.query, req.query, 'query'),
        body,
        // The actors carry their request, for the audit entries the use cases write.
        user: res.locals.user && { ...res.locals.user, request: requestContext(req, res) },
        worker: res.locals.worker && { ...res.locals.worker, request: requestContext(req, res) },
      });
      if (result === undefined) return;
      for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
      if (result.body === undefined) res.status(result.status).end();
      else res.status(result.status).json(result.body);
    };
    // In the request's trace again: a body parser's stream callbacks lost it.
    chain.push((req, res) => inRequestTrace(res, () => handle(req, res)));
    router[route.method](template, ...chain);
  }
}
