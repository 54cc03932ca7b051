import { RateLimitedError, type RequestContext, safeNextOr, type User } from '@trellis/core';
import type { RequestHandler } from 'express';
import { problem, sendProblem } from '../errors/problem.js';
import { clientKey, type FailureLimiter } from '../limits/FailureLimiter.js';
import { requestContext } from '../routing/requestContext.js';
import type { SessionCookies } from './SessionCookies.js';

export interface LinkSignInOptions {
  /** The person the link's token signs in (spending a one-time link), or null: not valid. */
  redeem(token: string, request: RequestContext): Promise<User | null>;
  sessions: SessionCookies;
  /** Wrong tokens per client address: past the limit, `429` with `Retry-After`. */
  failures: FailureLimiter;
  /** Whether a browser gets the sign-in page back (with the error) instead of a problem. */
  hasWebPages: boolean;
  /** The problem code of a token that is not valid (`invalid_bootstrap_token`, `invalid_sign_in_link`). */
  invalidCode: 'invalid_bootstrap_token' | 'invalid_sign_in_link';
}

/**
 * `GET <path>?token=…[&next=/path]`: a sign-in by link (the administrator's bootstrap link, a
 * teammate's one-time link). A valid token starts a web session and lands on `next`; an invalid
 * one is counted against the client's address and sends a browser back to the sign-in page.
 */
export function linkSignIn(options: LinkSignInOptions): RequestHandler {
  return async (req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const next = safeNextOr(req.query.next);
    // A person on the sign-in page gets that page back, saying what went wrong.
    const backToSignIn = (error: string) => {
      const query = new URLSearchParams({ error, ...(next === '/' ? {} : { next }) });
      res.redirect(303, `${req.baseUrl}/signin?${query}`);
    };
    const fromBrowser = options.hasWebPages && req.accepts(['json', 'html']) === 'html';
    const client = clientKey(req);
    try {
      await options.failures.refuseIfBlocked(client);
    } catch (error) {
      if (!(error instanceof RateLimitedError) || !fromBrowser) throw error;
      res.setHeader('Retry-After', String(error.retryAfterSeconds));
      backToSignIn('too_many_attempts');
      return;
    }
    const user = await options.redeem(token, requestContext(req, res));
    if (user === null) {
      await options.failures.recordFailure(client);
      if (fromBrowser) {
        backToSignIn(options.invalidCode);
        return;
      }
      sendProblem(res, problem(401, options.invalidCode, 'this sign-in link is not valid (or was already used)'));
      return;
    }
    options.sessions.start(res, user);
    // Relative to where the control plane is mounted (an embedding app may use a prefix).
    res.redirect(303, `${req.baseUrl}${next}`);
  };
}
