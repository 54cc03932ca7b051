import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import { problem, sendProblem } from '../errors/problem.js';

/**
 * `GET /metrics` in the Prometheus text format. With a `token`, only a request bearing it is
 * answered (compared in constant time); without one, whoever reaches the listener may read it
 * (the separate metrics port, which the deployment keeps private).
 */
export function metricsEndpoint(registry: Registry, token: string | null): RequestHandler {
  const expected = token === null ? null : digest(token);
  return async (req, res) => {
    if (expected !== null) {
      const header = req.headers.authorization;
      if (header === undefined || !header.startsWith('Bearer ')) {
        sendProblem(res, problem(401, 'unauthenticated', 'the metrics need the bearer token TRELLIS_METRICS_TOKEN'));
        return;
      }
      if (!timingSafeEqual(digest(header.slice('Bearer '.length)), expected)) {
        sendProblem(res, problem(401, 'invalid_token', 'the bearer token is not the metrics token'));
        return;
      }
    }
    const text = await registry.metrics();
    res.setHeader('Cache-Control', 'no-store');
    res.type(registry.contentType).send(text);
  };
}

/** Equal-length digests, so the comparison's time says nothing of the token's length either. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
