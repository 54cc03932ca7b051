import { createHash } from 'node:crypto';
import { hashToken } from '../auth/workerToken.js';
import type { UserActor } from '../domain/actors.js';
import { NotFoundError, ValidationError } from '../domain/errors.js';
import { systemScope } from '../ports/UnitOfWork.js';
import type { ApiTokenUseCases } from '../tokens/ApiTokenUseCases.js';
import { recordAudit } from '../usecases/audit.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import { personalNamespace } from './names.js';

/** The OAuth client the discovery document names for `login.v1` (the stock CLI sends it back). */
export const TFE_LOGIN_CLIENT_ID = 'terraform-cli';
/** The loopback ports the CLI may listen on for the redirect (as HCP Terraform advertises). */
export const TFE_LOGIN_PORTS = [10000, 10010] as const;

/** What the CLI sends to the authorization endpoint, and the consent page sends back. */
export interface TfeAuthorizationRequest {
  client_id: string;
  redirect_uri: string;
  state: string;
  code_challenge: string;
  code_challenge_method: 'S256';
}

/** The token endpoint's form (`application/x-www-form-urlencoded`). */
export interface TfeTokenRequest {
  grant_type?: unknown;
  code?: unknown;
  client_id?: unknown;
  redirect_uri?: unknown;
  code_verifier?: unknown;
}

const CHALLENGE = /^[A-Za-z0-9_-]{43,128}$/;
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

function invalidRequest(message: string, path: string): ValidationError {
  return new ValidationError(message, [{ path, message }], 'invalid_authorization_request');
}

function invalidGrant(): ValidationError {
  return new ValidationError('the authorization code is not valid, was used, or has expired', [], 'invalid_grant');
}

/**
 * The redirect a login may go to: plain http on this machine (the CLI's temporary server), on
 * a port of `TFE_LOGIN_PORTS`. Anything else could hand the code to another host.
 */
export function isLoopbackRedirect(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  const port = Number(url.port);
  return (
    url.protocol === 'http:' &&
    ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) &&
    url.username === '' &&
    url.password === '' &&
    url.hash === '' &&
    Number.isInteger(port) &&
    port >= TFE_LOGIN_PORTS[0] &&
    port <= TFE_LOGIN_PORTS[1]
  );
}

/**
 * `tofu login` (issue 26, `login.v1`): the OAuth authorization-code grant with PKCE S256 to a
 * loopback redirect. The consent page (web, for a signed-in person) approves; the token endpoint
 * mints a revocable `trt_` API token of that person, listed with their tokens and audited, whose
 * lifetime is a setting. No session token the stock CLI cannot refresh is ever handed out.
 */
export class TfeLoginUseCases {
  constructor(
    private readonly deps: CoreDeps,
    private readonly apiTokens: ApiTokenUseCases,
  ) {}

  /** Checks what the CLI sent to the authorization endpoint (the consent page shows it once it passes). */
  parseAuthorization(query: Record<string, unknown>): TfeAuthorizationRequest {
    const text = (name: string, max: number): string => {
      const value = query[name];
      if (typeof value !== 'string' || value === '' || value.length > max) {
        throw invalidRequest(`${name} is missing or too long`, name);
      }
      return value;
    };
    if (query.response_type !== 'code') throw invalidRequest('response_type must be code', 'response_type');
    const clientId = text('client_id', 100);
    if (clientId !== TFE_LOGIN_CLIENT_ID) throw invalidRequest(`client_id must be ${TFE_LOGIN_CLIENT_ID}`, 'client_id');
    const redirectUri = text('redirect_uri', 500);
    if (!isLoopbackRedirect(redirectUri)) {
      throw invalidRequest(
        `redirect_uri must be http://localhost on a port from ${TFE_LOGIN_PORTS[0]} to ${TFE_LOGIN_PORTS[1]}`,
        'redirect_uri',
      );
    }
    const challenge = text('code_challenge', 128);
    if (!CHALLENGE.test(challenge))
      throw invalidRequest('code_challenge must be a base64url SHA-256', 'code_challenge');
    if (query.code_challenge_method !== 'S256') {
      throw invalidRequest('code_challenge_method must be S256', 'code_challenge_method');
    }
    return {
      client_id: clientId,
      redirect_uri: redirectUri,
      state: text('state', 500),
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
  }

  /**
   * The person approved the consent page: a one-time code, bound to the request's client,
   * redirect and challenge, valid a few minutes. Answers the loopback URL to send the browser to.
   */
  async approve(user: UserActor, query: Record<string, unknown>): Promise<{ redirect: string }> {
    const request = this.parseAuthorization(query);
    const code = Buffer.from(this.deps.random.bytes(32)).toString('base64url');
    const now = this.deps.clock.now();
    await this.deps.uow.run(systemScope, async (stores) => {
      await stores.tfeLoginCodes.save({
        code_hash: hashToken(code),
        user_id: user.userId,
        client_id: request.client_id,
        redirect_uri: request.redirect_uri,
        code_challenge: request.code_challenge,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + this.deps.settings.tfe.loginCodeSeconds * 1000).toISOString(),
        consumed_at: null,
      });
      await stores.tfeLoginCodes.deleteExpired(now.toISOString());
      await recordAudit(stores, this.deps, user, {
        action: 'tfe_login.approve',
        target: { type: 'user', id: user.userId },
        owner_id: user.userId,
        details: { client_id: request.client_id },
      });
    });
    const redirect = new URL(request.redirect_uri);
    redirect.searchParams.set('code', code);
    redirect.searchParams.set('state', request.state);
    return { redirect: redirect.toString() };
  }

  /**
   * The token endpoint: the code once, with the same client and redirect, and the verifier whose
   * S256 is the challenge. Answers a new API token of the person who approved.
   */
  async exchange(form: TfeTokenRequest, request?: UserActor['request']): Promise<{ access_token: string }> {
    if (form.grant_type !== 'authorization_code') {
      throw new ValidationError('grant_type must be authorization_code', [], 'unsupported_grant_type');
    }
    const { code, code_verifier: verifier } = form;
    if (typeof code !== 'string' || code.length > 200 || typeof verifier !== 'string' || !VERIFIER.test(verifier)) {
      throw invalidGrant();
    }
    const now = this.deps.clock.now();
    const found = await this.deps.uow.run(systemScope, async (stores) => {
      const stored = await stores.tfeLoginCodes.consume(hashToken(code), now.toISOString());
      const user = stored ? await stores.users.get(stored.user_id) : null;
      return stored && user ? { stored, user } : null;
    });
    if (!found) throw invalidGrant();
    const { stored, user } = found;
    const challenge = createHash('sha256').update(verifier, 'utf8').digest('base64url');
    if (
      stored.consumed_at !== null ||
      Date.parse(stored.expires_at) <= now.getTime() ||
      stored.client_id !== form.client_id ||
      stored.redirect_uri !== form.redirect_uri ||
      stored.code_challenge !== challenge
    ) {
      throw invalidGrant();
    }
    const stamp = now
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z');
    const created = await this.apiTokens.create(
      { userId: user.id, email: user.email, ...(request ? { request } : {}) },
      { name: `tofu-login-${stamp}`, expires_in_days: this.deps.settings.tfe.loginTokenDays },
    );
    return { access_token: created.token };
  }

  /** `GET /api/v2/account/details`: who the token is, with the name of their personal namespace. */
  async accountDetails(actor: UserActor): Promise<{ id: string; email: string; name: string; username: string }> {
    const user = await this.deps.uow.read(systemScope, (stores) => stores.users.get(actor.userId));
    if (!user) throw new NotFoundError('user');
    return { id: user.id, email: user.email, name: user.name, username: personalNamespace(user.id) };
  }
}
