import { isDomainError, RateLimitedError, TooLargeError } from '@trellis/core';
import type { ErrorRequestHandler, Response } from 'express';
import { problemFromDomainError } from '../errors/problem.js';
import type { Logger } from '../logger.js';

/**
 * JSON:API (`application/vnd.api+json`) for the protocols the stock CLI speaks (issue 26; the
 * run and registry protocols build on it): resources with a type, an id, attributes and
 * relationships, list documents with pagination `meta`, and errors as JSON:API error objects.
 * Generic: it knows no Trellis record.
 */
export const JSON_API = 'application/vnd.api+json';

export type Attributes = Record<string, unknown>;
export type Linkage = { type: string; id: string };
export type Relationship = { data: Linkage | Linkage[] | null; links?: Record<string, string> };

export interface Resource {
  type: string;
  id: string;
  attributes: Attributes;
  relationships?: Record<string, Relationship>;
  links?: Record<string, string>;
}

export function resource(
  type: string,
  id: string,
  attributes: Attributes,
  relationships: Record<string, Linkage | Linkage[] | null> = {},
  links?: Record<string, string>,
): Resource {
  const related: Record<string, Relationship> = {};
  for (const [name, data] of Object.entries(relationships)) related[name] = { data };
  return {
    type,
    id,
    attributes,
    ...(Object.keys(related).length > 0 ? { relationships: related } : {}),
    ...(links ? { links } : {}),
  };
}

export function linkage(type: string, id: string): Linkage {
  return { type, id };
}

/** One page of a list: `page[number]` (from 1) and `page[size]` (at most 100), as HCP Terraform counts them. */
export interface PageOf<T> {
  items: T[];
  meta: { pagination: Record<string, number | null> };
}

export function paginate<T>(all: readonly T[], query: Record<string, unknown>): PageOf<T> {
  const page = query.page as Record<string, unknown> | undefined;
  const number = Math.max(1, Number(page?.number ?? query['page[number]'] ?? 1) || 1);
  const size = Math.min(100, Math.max(1, Number(page?.size ?? query['page[size]'] ?? 20) || 20));
  const totalPages = Math.max(1, Math.ceil(all.length / size));
  return {
    items: all.slice((number - 1) * size, number * size),
    meta: {
      pagination: {
        'current-page': number,
        'page-size': size,
        'prev-page': number > 1 ? number - 1 : null,
        'next-page': number < totalPages ? number + 1 : null,
        'total-pages': totalPages,
        'total-count': all.length,
      },
    },
  };
}

export function sendDocument(
  res: Response,
  status: number,
  data: Resource | Resource[] | null,
  extra: { meta?: unknown; included?: Resource[] } = {},
): void {
  res
    .status(status)
    .type(JSON_API)
    .send(JSON.stringify({ data, ...extra }));
}

/** One JSON:API error object; `code` is Trellis's problem code (the registry's), `status` a string. */
export interface JsonApiError {
  status: string;
  title: string;
  detail: string;
  code: string;
}

export function sendErrors(res: Response, status: number, errors: JsonApiError[]): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.status(status).type(JSON_API).send(JSON.stringify({ errors }));
}

/**
 * The error handler of a JSON:API router: a domain error becomes one error object with the status
 * its problem code has (go-tfe reads a `404` as "not found", which is what makes the CLI create a
 * missing workspace); anything else a `500` whose details go to the log only.
 */
export function jsonApiErrorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    if (isDomainError(error)) {
      if (error instanceof RateLimitedError) res.setHeader('Retry-After', String(error.retryAfterSeconds));
      if (error instanceof TooLargeError || !req.complete) res.setHeader('Connection', 'close');
      const body = problemFromDomainError(error);
      if (body.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="trellis"');
      sendErrors(res, body.status, [
        { status: String(body.status), title: body.title, detail: body.detail, code: body.code },
      ]);
      return;
    }
    const type = (error as { type?: string } | null)?.type;
    if (type === 'entity.parse.failed') {
      sendErrors(res, 400, [
        { status: '400', title: 'Bad Request', detail: 'the body is not valid JSON', code: 'malformed_json' },
      ]);
      return;
    }
    if (type === 'entity.too.large') {
      sendErrors(res, 413, [
        {
          status: '413',
          title: 'Content Too Large',
          detail: 'the request body is too large',
          code: 'payload_too_large',
        },
      ]);
      return;
    }
    logger.error({ err: error, method: req.method, path: req.path }, 'unhandled error');
    sendErrors(res, 500, [
      {
        status: '500',
        title: 'Internal Server Error',
        detail: 'an unexpected error occurred; it has been logged',
        code: 'internal_error',
      },
    ]);
  };
}

/** The attributes of a JSON:API request body (`data.attributes`), or an empty object. */
export function attributesOf(body: unknown): Record<string, unknown> {
  const data = (body as { data?: { attributes?: unknown } } | null)?.data;
  const attributes = data?.attributes;
  return attributes && typeof attributes === 'object' ? (attributes as Record<string, unknown>) : {};
}

/** `data.relationships[name].data` of a request body. */
export function relationshipOf(body: unknown, name: string): Linkage | Linkage[] | null {
  const relationships = (body as { data?: { relationships?: Record<string, { data?: unknown }> } } | null)?.data
    ?.relationships;
  const data = relationships?.[name]?.data;
  return (data as Linkage | Linkage[] | undefined) ?? null;
}

/** A JSON:API list body (`data: [{type, id|attributes}]`), e.g. the tags to add. */
export function dataList(body: unknown): { type?: string; id?: string; attributes?: Record<string, unknown> }[] {
  const data = (body as { data?: unknown } | null)?.data;
  return Array.isArray(data) ? data : [];
}
