import {
  isApiTokenPrefixed,
  isJobRegistryToken,
  type RegistryActor,
  UnauthorizedError,
  type UseCases,
} from '@trellis/core';
import type { RequestHandler, Response } from 'express';
import { clientKey, type FailureLimiter } from '../limits/FailureLimiter.js';
import { requestContext } from '../routing/requestContext.js';

function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1] ?? null;
}

/** Whoever a registry protocol request acts as (set by `registryAuthenticate`): a person or a job. */
export function registryActorOf(res: Response): RegistryActor {
  return res.locals.registryActor as RegistryActor;
}

/**
 * Authentication of the registry protocols (issue 28): the stock CLI's bearer token, as on the
 * Terraform Cloud API (an API token, what `tofu login` stores, or a CLI access token), or a
 * running job's registry token (`trr_…`, what an agent writes into its engine's CLI
 * configuration), which reads only its owner's registry. A person is also `actorOf(res)`, for the
 * routes that serve people only. Failed attempts count per client address (`429` past the limit).
 */
export function registryAuthenticate(useCases: UseCases, failures: FailureLimiter): RequestHandler {
  return async (req, res, next) => {
    const token = bearerToken(req.headers.authorization);
    const request = requestContext(req, res);
    await failures.limitBearer(clientKey(req), token, async () => {
      if (!token) throw new UnauthorizedError('unauthenticated', 'a bearer token is required (run tofu login)');
      if (isJobRegistryToken(token)) {
        res.locals.registryActor = { ...(await useCases.jobRegistry.authenticate(token)), request };
      } else {
        const person = isApiTokenPrefixed(token)
          ? await useCases.apiTokens.authenticate(token)
          : useCases.auth.authenticateAccessToken(token);
        res.locals.tfeActor = { ...person, request };
        res.locals.registryActor = res.locals.tfeActor;
      }
    });
    next();
  };
}
