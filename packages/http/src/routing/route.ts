import type { AuthKind, Operation, ResponseSpec } from '@trellis/contract';
import type { UserActor, WorkerActor } from '@trellis/core';
import type { Request, Response } from 'express';
import type { z } from 'zod';

export type { AuthKind, ResponseSpec };

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

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;
type Sent<S> = S extends z.ZodType ? z.input<S> : undefined;

/**
 * What a handler of this operation may answer: one of the operation's statuses, with the body its
 * schema describes (none where the contract gives no schema), or `undefined` when the handler
 * wrote the response itself. A handler answering a status or a shape the contract does not have
 * does not compile.
 */
export type AnswerOf<O extends Operation> =
  | {
      [S in keyof O['responses'] & number]: {
        status: S;
        body?: O['responses'][S] extends { schema: infer T }
          ? Sent<T>
          : O['responses'][S] extends { contentType: string }
            ? unknown
            : undefined;
        headers?: Record<string, string>;
      };
    }[keyof O['responses'] & number]
  | undefined;

/** An operation of the contract with the handler that serves it. */
export interface RouteSpec extends Operation {
  // biome-ignore lint/suspicious/noExplicitAny: the mount validates each part with the operation's own schemas
  handler(ctx: RouteContext<any, any, any>): Promise<HandlerResult>;
}

/** The handler of an operation: its request typed by the operation's schemas, its answer by its responses. */
export type HandlerOf<O extends Operation> = (
  ctx: RouteContext<Parsed<O['params']>, Parsed<O['query']>, Parsed<Exclude<O['body'], 'binary' | 'raw'>>>,
) => Promise<AnswerOf<O>>;

/**
 * Serves an operation of the contract: the request reaches the handler validated by the
 * operation's schemas (`params`, `query`, `body` typed by them), and what the handler answers is
 * type-checked against the operation's `responses`. (`H` keeps the handler's literal statuses:
 * inferred from the handler, then checked against the operation's.)
 */
export function implement<const O extends Operation, H extends HandlerOf<O> = HandlerOf<O>>(
  operation: O,
  handler: H,
): RouteSpec {
  return { ...operation, handler } as RouteSpec;
}
