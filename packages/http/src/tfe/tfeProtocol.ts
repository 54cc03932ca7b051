import { pipeline } from 'node:stream/promises';
import {
  type Clock,
  type RateLimitStore,
  type SignedUrls,
  TFE_LOGIN_CLIENT_ID,
  TFE_LOGIN_PORTS,
  type UseCases,
  ValidationError,
} from '@trellis/core';
import express, { type Request, type Router } from 'express';
import { clientKey, type FailureLimit, FailureLimiter } from '../limits/FailureLimiter.js';
import type { Logger } from '../logger.js';
import { requestContext } from '../routing/requestContext.js';
import { REGISTRY_PROTOCOLS } from '../registry/protocols.js';
import type { RegistryProtocol, RegistryProtocolDeps } from '../registry/registryProtocols.js';
import { signedConfigurationVersionRoutes } from './configurationVersionRoutes.js';
import { ServiceDiscovery, TFE_API_BASE, TFE_LOGIN_AUTHORIZE_PATH, TFE_LOGIN_TOKEN_PATH } from './discovery.js';
import { jsonApiErrorHandler } from './jsonapi.js';
import { logRoutes } from './runs/logsRoutes.js';
import { runPhaseRoutes } from './runs/phasesRoutes.js';
import { tfeAuthenticate } from './tfeAuth.js';
import { downloadObject, pendingOfClaims, tfeRoutes, uploadObject } from './tfeRoutes.js';

export interface TfeProtocolOptions {
  useCases: UseCases;
  signer: SignedUrls;
  logger: Logger;
  clock: Clock;
  rateLimits: RateLimitStore;
  /** The origin answers' absolute URLs use: the configured public URL, or the one the client reached. */
  publicOrigin(req: Request): string;
  /** Failed bearer tokens and token requests per client address. */
  authFailures: FailureLimit;
  signedUrlSeconds: number;
  /** Services other features add to the discovery document (the registries). */
  discovery?: ServiceDiscovery;
  /** The private registry's protocols served beside the API (default: all, `REGISTRY_PROTOCOLS`). */
  registries?: readonly RegistryProtocol[];
}

/**
 * The Terraform Cloud protocol of the stock CLI (issue 26): service discovery, the token
 * endpoint of `tofu login` (its consent page is the web's), the API under `/api/v2/`, and the
 * signed URLs states are uploaded to and downloaded from (the only place a credential may be in
 * a query string).
 */
export function tfeProtocol(options: TfeProtocolOptions): Router {
  const router = express.Router();
  const failures = new FailureLimiter('tfe-auth', options.authFailures, options.rateLimits, options.clock);
  const discovery = options.discovery ?? new ServiceDiscovery();
  discovery
    .register('tfe.v2', TFE_API_BASE)
    .register('tfe.v2.1', TFE_API_BASE)
    .register('tfe.v2.2', TFE_API_BASE)
    .register('state.v2', TFE_API_BASE)
    .register('login.v1', {
      client: TFE_LOGIN_CLIENT_ID,
      grant_types: ['authz_code'],
      authz: TFE_LOGIN_AUTHORIZE_PATH,
      token: TFE_LOGIN_TOKEN_PATH,
      ports: [...TFE_LOGIN_PORTS],
    });
  const registries = options.registries ?? REGISTRY_PROTOCOLS;
  const registryDeps: RegistryProtocolDeps = {
    useCases: options.useCases,
    signer: options.signer,
    signedUrlSeconds: options.signedUrlSeconds,
    publicOrigin: options.publicOrigin,
    logger: options.logger,
    authenticate: tfeAuthenticate(options.useCases, failures),
  };
  for (const registry of registries) {
    if (registry.service) discovery.register(registry.service, registry.base);
  }
  router.get('/.well-known/terraform.json', discovery.handler());
  // The registry's protocols answer problem+json errors (the CLI reads only their status).
  for (const registry of registries) router.use(registry.base.replace(/\/$/, ''), registry.routes(registryDeps));

  // The OAuth token endpoint answers OAuth's own error shape (RFC 6749 §5.2), which the CLI's
  // OAuth library reads; a wrong code counts as a failed attempt of the client's address.
  router.post(TFE_LOGIN_TOKEN_PATH, express.urlencoded({ extended: false, limit: '8kb' }), async (req, res) => {
    const client = clientKey(req);
    res.setHeader('Cache-Control', 'no-store');
    try {
      await failures.refuseIfBlocked(client);
      const { access_token } = await options.useCases.tfe.login.exchange(req.body ?? {}, requestContext(req, res));
      res.json({ access_token, token_type: 'bearer' });
    } catch (error) {
      if (error instanceof ValidationError) {
        await failures.recordFailure(client);
        res.status(400).json({ error: error.code, error_description: error.message });
        return;
      }
      throw error;
    }
  });

  // A run's phases (issue 27), ahead of the rest of the API (which ends with its 404).
  router.use(
    TFE_API_BASE.replace(/\/$/, ''),
    runPhaseRoutes({
      useCases: options.useCases,
      signer: options.signer,
      clock: options.clock,
      publicOrigin: options.publicOrigin,
      failures,
      logger: options.logger,
      signedUrlSeconds: options.signedUrlSeconds,
    }),
  );
  router.use(
    TFE_API_BASE.replace(/\/$/, ''),
    tfeRoutes({
      useCases: options.useCases,
      signer: options.signer,
      publicOrigin: options.publicOrigin,
      failures,
      logger: options.logger,
      signedUrlSeconds: options.signedUrlSeconds,
    }),
  );

  const signed = express.Router();
  signed.get('/state-versions/:owner/:version', async (req, res) => {
    const object = downloadObject(String(req.params.owner), Number(req.params.version));
    options.signer.verify('GET', object, req.query);
    const { body, size, version } = await options.useCases.tfe.states.open(
      String(req.params.owner),
      Number(req.params.version),
    );
    res.status(200);
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', String(size));
    res.setHeader('ETag', `"${version.sha256}"`);
    res.setHeader('Cache-Control', 'no-store');
    await pipeline(body, res);
  });
  signed.put('/state-uploads/:upload', async (req, res) => {
    const claims = options.signer.verify('PUT', uploadObject(String(req.params.upload)), req.query);
    const declared = Number(req.headers['content-length']);
    await options.useCases.tfe.states.upload(pendingOfClaims(claims), req, Number.isFinite(declared) ? declared : null);
    res.status(200).end();
  });
  // The JSON form of the state is not kept (outputs are read from the state itself): its URL takes it and lets it go.
  signed.put('/state-uploads/:upload/json', async (req, res) => {
    options.signer.verify('PUT', uploadObject(String(req.params.upload), true), req.query);
    req.resume();
    await new Promise((resolve) => req.once('end', resolve));
    res.status(200).end();
  });
  signed.use(logRoutes(options));
  signed.use(signedConfigurationVersionRoutes(options));
  for (const registry of registries) if (registry.signed) signed.use(registry.signed(registryDeps));
  signed.use(jsonApiErrorHandler(options.logger));
  router.use('/_signed', signed);
  return router;
}
