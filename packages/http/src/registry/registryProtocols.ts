import type { SignedUrls, UseCases } from '@trellis/core';
import type { Request, RequestHandler, Router } from 'express';
import type { Logger } from '../logger.js';

/**
 * Where each protocol of the private registry lives (issue 28). The module and provider
 * registries are found through service discovery (`modules.v1`, `providers.v1`); the provider
 * network mirror is configured by its URL (`provider_installation { network_mirror { url } }`).
 */
export const REGISTRY_BASES = {
  modules: '/api/registry/v1/modules/',
  providers: '/api/registry/v1/providers/',
  mirror: '/api/registry/mirror/',
} as const;

/** What a registry protocol's routes are given: the use cases, the signed URLs and the CLI's authentication. */
export interface RegistryProtocolDeps {
  useCases: UseCases;
  /** Signs the short-lived URLs of downloads (the stock CLI sends no token to them). */
  signer: SignedUrls;
  signedUrlSeconds: number;
  /** The origin absolute URLs use: the configured public URL, or the one the client reached. */
  publicOrigin(req: Request): string;
  logger: Logger;
  /**
   * The stock CLI's bearer token (what `tofu login` stored, or a CLI access token), failed
   * attempts limited per address, as on the Terraform Cloud API; `actorOf(res)` reads the person.
   */
  authenticate: RequestHandler;
}

/**
 * One protocol of the registry: its discovery service id (none for the mirror), its base path
 * and its routes below the base, plus any routes of the signed URLs it hands out (mounted under
 * `/_signed`, with no authentication but the signature).
 */
export interface RegistryProtocol {
  readonly service?: string;
  readonly base: string;
  routes(deps: RegistryProtocolDeps): Router;
  signed?(deps: RegistryProtocolDeps): Router;
}
