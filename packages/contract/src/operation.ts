import type { z } from 'zod';

/**
 * Who may call an operation (SPEC §5): `user` is a CLI bearer token or a web session, `session` a
 * web session only, `worker` the agent headers, `state` the agent headers or (the engine's http
 * backend) Basic auth with a job's state token, `release` the CI secret, `none` anyone.
 */
export type AuthKind = 'none' | 'user' | 'session' | 'worker' | 'state' | 'release';

/** One answer an operation may give. */
export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Defaults to application/json when a schema is given. */
  contentType?: string;
  /** Response headers worth documenting (e.g. the `Link` of a paged list), by name. */
  headers?: Record<string, { description: string }>;
}

/**
 * One API operation as data (issue 29): what `http` serves (validating the request with these
 * schemas and type-checking each answer against `responses`), what the OpenAPI document and
 * `docs/api.md` describe, and what the typed client calls. Paths use OpenAPI's `{param}` form.
 */
export interface Operation {
  /** `lock`/`unlock` are the WebDAV verbs the Terraform/OpenTofu `http` state backend uses. */
  method: 'get' | 'post' | 'put' | 'patch' | 'delete' | 'lock' | 'unlock';
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: AuthKind;
  params?: z.ZodType;
  query?: z.ZodType;
  /**
   * A JSON body schema, `binary` for a streamed upload read by the handler, or `raw` for a
   * provider's JSON event also read by the handler as it streams (signed webhook deliveries: the
   * signature is over the bytes, so nothing parses them first).
   */
  body?: z.ZodType | 'binary' | 'raw';
  /** Largest JSON body accepted, in bytes (default 1 MiB); streamed bodies are limited by their handler. */
  bodyLimit?: number;
  /** Requests allowed per client address per window (unauthenticated endpoints). */
  rateLimit?: { windowSeconds: number; limit: number };
  responses: Record<number, ResponseSpec>;
}

/** Declares an operation, keeping its literal types (path, schemas, statuses) for servers and clients. */
export function operation<const O extends Operation>(spec: O): O {
  return spec;
}

type Input<S> = S extends z.ZodType ? z.input<S> : never;
type Output<S> = S extends z.ZodType ? z.output<S> : never;

/** The path parameters of an operation, as a caller gives them. */
export type ParamsOf<O> = O extends { params: infer S } ? Input<S> : never;
/** The query of an operation, as a caller gives it. */
export type QueryOf<O> = O extends { query: infer S } ? Input<S> : never;
/** The JSON body of an operation, as a caller gives it. */
export type BodyOf<O> = O extends { body: infer S } ? Input<S> : never;

/** The statuses an operation answers below 300. */
export type SuccessStatus<O extends Operation> = Extract<keyof O['responses'], 200 | 201 | 202 | 203 | 204 | 206>;

/** What an operation answers on success, as a client reads it (`undefined` for an answer without a body). */
export type AnswerOf<O extends Operation> = {
  [S in SuccessStatus<O>]: O['responses'][S] extends { schema: infer T } ? Output<T> : undefined;
}[SuccessStatus<O>];

/**
 * The request path of an operation: its `{param}`s replaced by the given values, each encoded as
 * one path segment.
 */
export function pathOf(op: Pick<Operation, 'path'>, params: Record<string, string | number> = {}): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${op.path}: the path parameter ${name} is missing`);
    return encodeURIComponent(String(value));
  });
}

/**
 * The path parameters of `path` when it is a path of the operation (`{param}`s each one
 * non-empty segment), else null.
 */
export function matchPath(op: Pick<Operation, 'path'>, path: string): Record<string, string> | null {
  const names: string[] = [];
  const pattern = op.path
    .split(/\{(\w+)\}/)
    .map((part, index) => {
      if (index % 2 === 0) return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      names.push(part);
      return '([^/]+)';
    })
    .join('');
  const match = new RegExp(`^${pattern}$`).exec(path);
  if (!match) return null;
  try {
    return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(match[index + 1] ?? '')]));
  } catch {
    return null;
  }
}
