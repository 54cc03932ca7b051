import type { RequestHandler } from 'express';

/**
 * The service discovery document of `GET /.well-known/terraform.json` (issue 26): a registry of
 * services other features add to (the module and provider registries next), each an id
 * (`tfe.v2`, `login.v1`, …) and its value (a base URL path, or an object such as `login.v1`'s).
 * It always answers, whatever credentials come with it: the CLI sends its stored token there,
 * and an expired one must not lock a person out of `tofu login`.
 */
export class ServiceDiscovery {
  private readonly services = new Map<string, unknown>();

  register(id: string, value: unknown): this {
    if (!/^[a-z][a-z0-9-]*\.v\d+(\.\d+)?$/.test(id)) throw new Error(`not a service id: ${id}`);
    if (this.services.has(id)) throw new Error(`service ${id} is already registered`);
    this.services.set(id, value);
    return this;
  }

  document(): Record<string, unknown> {
    return Object.fromEntries([...this.services].sort(([a], [b]) => a.localeCompare(b)));
  }

  handler(): RequestHandler {
    return (_req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.json(this.document());
    };
  }
}

/** Where the Terraform Cloud API lives (the `tfe.v2*` and `state.v2` base). */
export const TFE_API_BASE = '/api/v2/';
/** The consent page (web) and the token endpoint of `tofu login`. */
export const TFE_LOGIN_AUTHORIZE_PATH = '/oauth/authorize';
export const TFE_LOGIN_TOKEN_PATH = '/oauth/token';
