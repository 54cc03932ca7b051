import { timingSafeEqual, createHash } from 'node:crypto';
import {
  ForbiddenError,
  isApiTokenPrefixed,
  isUuid,
  UnauthorizedError,
  UnavailableError,
  type UseCases,
  type WorkerActor,
} from '@trellis/core';
import type { Request, RequestHandler } from 'express';
import { clientKey, type FailureLimiter } from '../limits/FailureLimiter.js';
import type { AuthKind } from '../routing/route.js';
import type { SessionCookies } from './SessionCookies.js';

export interface AuthDeps {
  useCases: UseCases;
  sessions: SessionCookies;
  /** Whether an `Origin` is the web interface's; cookie-authenticated writes must come from it. */
  isWebOrigin: (origin: string | undefined) => boolean;
  releaseApiSecret: string | null;
  /**
   * Failed worker authentications per client address, on the agent and the state routes (an
   * unknown caller costs a database read).
   */
  workerFailures: FailureLimiter;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1] ?? null;
}

function basicCredentials(header: string | undefined): { user: string; password: string } | null {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Constant-time equality of two secrets of any length (compares their SHA-256 digests). */
export function secretsEqual(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Worker credentials checked under the per-address failure limit. A blocked address is refused
 * before any lookup, except for a worker that verified from it within the last day (vouched):
 * guessers sharing an agent's address (one NAT) must not lock the agent out (issue 23), so its
 * credentials are still checked, and only a wrong one is refused (`429`). A failure counts toward
 * the limit; a success vouches for the (address, worker) pair.
 */
async function limitedWorkerAuthentication(
  req: Request,
  deps: AuthDeps,
  claimedWorkerId: unknown,
  verify: () => Promise<WorkerActor>,
): Promise<WorkerActor> {
  const client = clientKey(req);
  const blocked = await deps.workerFailures.blocked(client);
  if (
    blocked &&
    !(isUuid(claimedWorkerId) && (await deps.workerFailures.vouched(client, claimedWorkerId.toLowerCase())))
  ) {
    throw blocked;
  }
  let actor: WorkerActor;
  try {
    actor = await verify();
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await deps.workerFailures.recordFailure(client);
    throw blocked ?? error;
  }
  await deps.workerFailures.vouch(client, actor.workerId);
  return actor;
}

/**
 * The middleware for one kind of caller. It sets `res.locals.user` or `res.locals.worker`, or
 * passes a domain error (401/403/503) to the problem handler.
 */
export function authenticate(kind: AuthKind, deps: AuthDeps): RequestHandler {
  switch (kind) {
    case 'none':
      return (_req, _res, next) => next();
    case 'user':
    case 'session':
      return async (req, res, next) => {
        const token = kind === 'user' ? bearerToken(req.headers.authorization) : null;
        if (token) {
          // Routed by prefix: `trt_…` is an API token (a database lookup), anything else a CLI
          // access token (a signature check). Neither is ever logged.
          res.locals.user = isApiTokenPrefixed(token)
            ? await deps.useCases.apiTokens.authenticate(token)
            : deps.useCases.auth.authenticateAccessToken(token);
          return next();
        }
        const session = deps.sessions.read(req);
        if (!session) {
          throw new UnauthorizedError(
            'unauthenticated',
            kind === 'session'
              ? 'sign in to the web interface first'
              : 'a bearer access token or a web session is required',
          );
        }
        // DESIGN §4: a cookie rides along on cross-site requests, so writes must prove their origin.
        if (!SAFE_METHODS.has(req.method) && !deps.isWebOrigin(req.headers.origin)) {
          throw new ForbiddenError(
            'csrf_rejected',
            'cross-site request refused: the Origin header must be the web origin',
          );
        }
        deps.sessions.refresh(res, session);
        res.locals.user = { userId: session.userId, email: session.email, provider: session.provider };
        next();
      };
    case 'worker':
      return async (req, res, next) => {
        // The state backend of OpenTofu/Terraform can only send Basic auth: id as user, token as password.
        const basic = req.headers['x-worker-id'] === undefined ? basicCredentials(req.headers.authorization) : null;
        const workerId = basic?.user ?? req.headers['x-worker-id'];
        const token = basic?.password ?? req.headers['x-worker-token'];
        // A known agent is served from the credential cache, whatever others at its address do
        // (and vouches for its address: renewed once an hour, in memory until then).
        const known = deps.useCases.workers.recognize(workerId, token);
        if (known) {
          await deps.workerFailures.vouch(clientKey(req), known.workerId);
          res.locals.worker = known;
          return next();
        }
        res.locals.worker = await limitedWorkerAuthentication(req, deps, workerId, () =>
          deps.useCases.workers.authenticate(workerId, token),
        );
        next();
      };
    case 'state':
      return async (req, res, next) => {
        // The engine's http backend sends Basic auth: the worker id and the job's state token (or,
        // from an older agent, the worker token). Agents may also use their headers. Failures count
        // toward the same per-address limit as the agent routes' (issue 23).
        const basic = req.headers['x-worker-id'] === undefined ? basicCredentials(req.headers.authorization) : null;
        const workerId = basic ? basic.user : req.headers['x-worker-id'];
        res.locals.worker = await limitedWorkerAuthentication(req, deps, workerId, () =>
          basic
            ? deps.useCases.workers.authenticateForState(basic.user, basic.password, req.params.vine_id)
            : deps.useCases.workers.authenticate(req.headers['x-worker-id'], req.headers['x-worker-token']),
        );
        next();
      };
    case 'release':
      return (req, _res, next) => {
        if (!deps.releaseApiSecret) {
          throw new UnavailableError(
            'release_api_disabled',
            'release endpoints are disabled: RELEASE_API_SECRET is not set',
          );
        }
        const token = bearerToken(req.headers.authorization);
        if (!token || !secretsEqual(token, deps.releaseApiSecret)) {
          throw new UnauthorizedError('invalid_release_secret', 'the release secret is missing or wrong');
        }
        next();
      };
    default: {
      const unreachable: never = kind;
      return unreachable;
    }
  }
}
