import type { RequestContext } from '@trellis/core';
import type { Request, Response } from 'express';

/**
 * What the audit log records of a request: its `X-Request-Id` (set by the first middleware) and
 * the client address as express sees it (`TRELLIS_TRUST_PROXY` decides whose `X-Forwarded-For`
 * is believed).
 */
export function requestContext(req: Request, res: Response): RequestContext {
  const id = res.getHeader('X-Request-Id');
  return { id: typeof id === 'string' ? id : '', ip: req.ip ?? req.socket.remoteAddress ?? '' };
}
