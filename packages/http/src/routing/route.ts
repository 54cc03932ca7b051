import type { UserActor, WorkerActor } from '@trellis/core';
import type { Request, Response } from 'express';
import type { z } from 'zod';

/**
 * Who may call a route (SPEC §5): `user` is a CLI bearer token or a web session, `session` a web
 * session only, `worker` the agent headers, `state` the agent headers or (the engine's http
 * backend) Basic auth with a job's state token, `release` the CI secret, `none` anyone.
 */
export type AuthKind = 'none' | 'user' | 'session' | 'worker' | 'state' | 'release';

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Defaults to application/json when a schema is given. */
  contentType?: string;
  /** Response headers worth documenting (e.g. the `Link` of a paged list), by name. */
  headers?: Record<string, { description: string }>;
}

export interface RouteContext<P, Q, B> {
  req: Request;
  res: Response;
  params: P;
  query: Q;
  body: B;
  /** Set for `user` and `session` routes. */
  user: UserActor;
  /** Set for `worker` routes. */
  worker: WorkerActor;
}

/** What a handler returns; `undefined` means it wrote the response itself (streams). */
export type HandlerResult = { status: number; body?: unknown; headers?: Record<string, string> } | undefined;

/**
 * One API operation: the schemas validate the request and, with the responses, produce the
 * OpenAPI document. Paths use OpenAPI's `{param}` form.
 */
export interface RouteSpec<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  /** `lock`/`unlock` are the WebDAV verbs the Terraform/OpenTofu `http` state backend uses. */
  method: 'get' | 'post' | 'put' | 'patch' | 'delete' | 'lock' | 'unlock';
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: AuthKind;
  params?: P;
  query?: Q;
  /**
   * A JSON body schema, `binary` for a streamed upload read by the handler, or `raw` for a
   * provider's JSON event also read by the handler as it streams (signed webhook deliveries: the
   * signature is over the bytes, so nothing parses them first).
   */
  body?: B | 'binary' | 'raw';
  /** Largest JSON body accepted, in bytes (default 1 MiB); streamed bodies are limited by their handler. */
  bodyLimit?: number;
  /** Requests allowed per client address per window (unauthenticated endpoints). */
  rateLimit?: { windowSeconds: number; limit: number };
  responses: Record<number, ResponseSpec>;
  handler(ctx: RouteContext<z.output<P>, z.output<Q>, z.output<B>>): Promise<HandlerResult>;
}

/** Keeps the schema types flowing into the handler's context. */
export function defineRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec {
  return spec as unknown as RouteSpec;
}
