import type { RequestHandler } from 'express';
import { sendShuttingDown } from './problem.js';

/**
 * Refuses every request once `stopping` is aborted (issue 30), `/healthz` and `/readyz` too, so
 * a balancer stops sending: `503 shutting_down` with `Retry-After`, never a `500`.
 */
export function refuseWhileStopping(stopping: AbortSignal): RequestHandler {
  return (_req, res, next) => {
    if (stopping.aborted) {
      sendShuttingDown(res);
      return;
    }
    next();
  };
}
