import type { DomainError, FieldIssue } from '@trellis/core';
import {
  InsufficientRoleError,
  isDomainError,
  LogSeqGapError,
  PolicyFailedError,
  statusOfError,
  type ProblemCode,
  RateLimitedError,
  TooLargeError,
  UnavailableError,
  ValidationError,
} from '@trellis/core';
import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from '../logger.js';

/** RFC 9457 problem details, with the stable `code` of DESIGN §4. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldIssue[];
  /** `insufficient_role`: the least role the action needs, and the caller's. */
  required_role?: string;
  role?: string;
  /** `policy_failed`: each failed mandatory policy with its messages. */
  failed_policies?: { policy_id: string; version: number; name: string; messages: string[] }[];
  /** `log_seq_gap`: the next `seq` the job's log expects. */
  expected_seq?: number;
  request_id?: string;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  507: 'Insufficient Storage',
};

/** A problem of this package's own; `code` must be in core's registry, with this `status`. */
export function problem(status: number, code: ProblemCode, detail: string, extra: Partial<Problem> = {}): Problem {
  return problemBody(status, code, detail, extra);
}

function problemBody(status: number, code: string, detail: string, extra: Partial<Problem>): Problem {
  return {
    type: `https://trellis.dev/problems/${code.replaceAll('_', '-')}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    ...extra,
  };
}

/**
 * The problem a domain error becomes: the status core's registry gives its code (only the
 * codes of `LEGACY_SECOND_STATUS` keep their error's kind when it differs), else its kind's.
 */
export function problemFromDomainError(error: DomainError): Problem {
  return problemBody(
    statusOfError(error),
    error.code,
    error.message,
    error instanceof ValidationError
      ? { errors: error.fields }
      : error instanceof InsufficientRoleError
        ? { required_role: error.requiredRole, role: error.role }
        : error instanceof PolicyFailedError
          ? { failed_policies: error.failedPolicies }
          : error instanceof LogSeqGapError
            ? { expected_seq: error.expectedSeq }
            : {},
  );
}

export function sendProblem(res: Response, body: Problem): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (body.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="trellis"');
  const requestId = res.getHeader('X-Request-Id');
  res
    .status(body.status)
    .type('application/problem+json')
    .send(JSON.stringify(typeof requestId === 'string' ? { ...body, request_id: requestId } : body));
}

/** Errors body-parser raises, by its `type` field. */
function bodyParserProblem(error: { type?: string; status?: number; limit?: number }): Problem | null {
  switch (error.type) {
    case 'entity.parse.failed':
      return problem(400, 'malformed_json', 'the request body is not valid JSON');
    case 'entity.too.large':
      return problem(413, 'payload_too_large', `the request body is larger than ${error.limit} bytes`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return problem(415, 'unsupported_media_type', 'the request body encoding is not supported');
    case 'request.aborted':
      return problem(400, 'request_aborted', 'the client aborted the request');
    default:
      return null;
  }
}

/** How long a client waits before retrying a `503` (a dependency away, or this replica stopping). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/**
 * A stopping replica never answers `500` (issue 30): a request that arrives once shutdown began
 * (on a keep-alive connection still open) or fails while it stops (the database or the artifact
 * store closing under it) is `503 shutting_down` with `Retry-After`, and the connection closes,
 * so the client retries, on another replica.
 */
export function sendShuttingDown(res: Response): void {
  res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  res.setHeader('Connection', 'close');
  sendProblem(res, problem(503, 'shutting_down', 'this server is stopping; retry (another replica answers)'));
}

/**
 * The last middleware: domain errors become their problem; anything else is a `500` whose
 * details go to the log (never to the client).
 */
export function problemErrorHandler(logger: Logger, stopping?: AbortSignal): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    if (isDomainError(error)) {
      if (error instanceof RateLimitedError) res.setHeader('Retry-After', String(error.retryAfterSeconds));
      if (error instanceof UnavailableError) res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
      // A body refused before it was read is not drained: the connection closes after the answer.
      if (error instanceof TooLargeError || !req.complete) res.setHeader('Connection', 'close');
      sendProblem(res, problemFromDomainError(error));
      return;
    }
    const parserProblem = typeof error === 'object' && error !== null ? bodyParserProblem(error) : null;
    if (parserProblem) {
      sendProblem(res, parserProblem);
      return;
    }
    if (stopping?.aborted) {
      // What stops under a request (a pool closing) is not a bug: the client retries elsewhere.
      logger.warn({ err: error, method: req.method, path: req.path }, 'request failed while the server stops');
      sendShuttingDown(res);
      return;
    }
    logger.error({ err: error, method: req.method, path: req.path }, 'unhandled error');
    sendProblem(res, problem(500, 'internal_error', 'an unexpected error occurred; it has been logged'));
  };
}
