import { isApiTokenPrefixed, UnauthorizedError, type UseCases, type UserActor } from '@trellis/core';
import type { RequestHandler, Response } from 'express';
import { clientKey, type FailureLimiter } from '../limits/FailureLimiter.js';
import { requestContext } from '../routing/requestContext.js';

function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1] ?? null;
}

/** The person a protocol request acts as (set by `tfeAuthenticate`). */
export function actorOf(res: Response): UserActor {
  return res.locals.tfeActor as UserActor;
}

/**
 * Authentication of the Terraform Cloud API (issue 26): a bearer token only, an API token
 * (`trt_…`, what `tofu login` stores) or a CLI access token; never a cookie, so no request here
 * can be forged cross-site. Failed attempts count per client address like the other guessable
 * credentials (`429` past the limit; a token that verified from the address lately still passes).
 */
export function tfeAuthenticate(useCases: UseCases, failures: FailureLimiter): RequestHandler {
  return async (req, res, next) => {
    const token = bearerToken(req.headers.authorization);
    res.locals.tfeActor = await failures.limitBearer(clientKey(req), token, async () => {
      if (!token) throw new UnauthorizedError('unauthenticated', 'a bearer token is required (run tofu login)');
      const actor = isApiTokenPrefixed(token)
        ? await useCases.apiTokens.authenticate(token)
        : useCases.auth.authenticateAccessToken(token);
      return { ...actor, request: requestContext(req, res) };
    });
    next();
  };
}
