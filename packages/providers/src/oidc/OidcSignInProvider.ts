import {
  type AuthorizationRequest,
  type AuthorizationResponse,
  type IdentityProvider,
  type ProviderProfile,
  type SignInProvider,
  UnauthorizedError,
  UnavailableError,
} from '@trellis/core';
import type * as Oidc from 'openid-client';
import { baseUrlOf, DEFAULT_TIMEOUT_MS, type ProviderOptions } from '../providerHttp.js';
import { pkceChallenge } from '../oauth2/pkce.js';

export const GOOGLE_ISSUER = 'https://accounts.google.com';
export const OIDC_SCOPES = ['openid', 'email', 'profile'] as const;

export interface OidcProviderOptions extends ProviderOptions {
  /** Which of Trellis's providers this issuer signs in as (default `google`). */
  id?: IdentityProvider;
  /** The issuer (`baseUrl` is its alias, as `TRELLIS_GOOGLE_BASE_URL`); default Google's. */
  issuer?: string;
  /** Default: `Google` for Google's issuer, else the issuer's host name. */
  displayName?: string;
}

/**
 * openid-client (and oauth4webapi under it) is loaded by the first sign-in through an OpenID
 * Connect issuer, not with the server (issue 31: an installation without one never needs it).
 */
let loaded: Promise<typeof Oidc> | null = null;
function loadOidc(): Promise<typeof Oidc> {
  loaded ??= import('openid-client');
  return loaded;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function isLoopback(url: URL): boolean {
  return LOOPBACK.has(url.hostname);
}

/**
 * Sign-in with any OpenID Connect issuer (Google by default; Okta, Keycloak, Entra ID, ... by
 * configuration): discovery at `<issuer>/.well-known/openid-configuration`, authorization code
 * flow with PKCE and `nonce`, and the ID token checked by openid-client: its signature against the
 * issuer's JWKS, `iss`, `aud`, `exp` and `nonce`; an RFC 9207 `iss` callback parameter is checked
 * too when the issuer announces it. Plain `http://` is accepted only for a loopback issuer (tests).
 */
export class OidcSignInProvider implements SignInProvider {
  readonly id: IdentityProvider;
  readonly displayName: string;
  readonly issuer: URL;
  private configuration: Promise<Oidc.Configuration> | null = null;

  constructor(private readonly options: OidcProviderOptions) {
    this.id = options.id ?? 'google';
    this.issuer = new URL(baseUrlOf(options.issuer ?? options.baseUrl ?? GOOGLE_ISSUER));
    if (this.issuer.protocol !== 'https:' && !isLoopback(this.issuer)) {
      throw new Error(`the OpenID Connect issuer must be https (got ${this.issuer.href})`);
    }
    this.displayName =
      options.displayName ?? (this.issuer.href.startsWith(GOOGLE_ISSUER) ? 'Google' : this.issuer.hostname);
  }

  async authorizationUrl(request: AuthorizationRequest): Promise<string> {
    const config = await this.discover();
    const oidc = await loadOidc();
    return oidc.buildAuthorizationUrl(config, {
      redirect_uri: request.redirectUri,
      scope: OIDC_SCOPES.join(' '),
      state: request.state,
      nonce: request.nonce,
      code_challenge: pkceChallenge(request.codeVerifier),
      code_challenge_method: 'S256',
    }).href;
  }

  async exchangeCode(response: AuthorizationResponse): Promise<ProviderProfile> {
    const config = await this.discover();
    const oidc = await loadOidc();
    const callback = new URL(response.redirectUri);
    for (const [name, value] of Object.entries(response.parameters)) callback.searchParams.set(name, value);
    try {
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: response.codeVerifier,
        expectedState: response.state,
        expectedNonce: response.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims) throw new UnauthorizedError('invalid_id_token', `${this.displayName} sent no ID token`);
      let email = typeof claims.email === 'string' ? claims.email : null;
      // Entra ID sends no `email_verified`; its optional `xms_edov` (email domain owner verified) stands in.
      let verified = claims.email_verified ?? claims.xms_edov;
      let name = typeof claims.name === 'string' ? claims.name : null;
      // Some issuers put the email in the UserInfo answer only.
      if (email === null || verified === undefined) {
        const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
        email ??= typeof info.email === 'string' ? info.email : null;
        verified ??= info.email_verified;
        name ??= typeof info.name === 'string' ? info.name : null;
      }
      return {
        providerUserId: claims.sub,
        email,
        // Some issuers send the claim as a string.
        emailVerified: verified === true || verified === 'true',
        name,
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token ?? null,
        expiresInSeconds: tokens.expiresIn() ?? null,
        scopes: (tokens.scope ?? OIDC_SCOPES.join(' ')).split(' ').filter(Boolean),
      };
    } catch (error) {
      throw this.translate(error, oidc);
    }
  }

  /** Discovery once; a failed discovery is retried by the next sign-in instead of being kept. */
  private discover(): Promise<Oidc.Configuration> {
    const secret = this.options.clientSecret;
    // RFC 6749's default `client_secret_basic`, unless the issuer announces only `_post`.
    const clientAuthentication =
      (oidc: typeof Oidc): Oidc.ClientAuth =>
      (as, client, body, headers) => {
        const supported = as.token_endpoint_auth_methods_supported;
        const basic = !supported || supported.includes('client_secret_basic');
        (basic ? oidc.ClientSecretBasic(secret) : oidc.ClientSecretPost(secret))(as, client, body, headers);
      };
    this.configuration ??= loadOidc()
      .then((oidc) =>
        oidc.discovery(this.issuer, this.options.clientId, { client_secret: secret }, clientAuthentication(oidc), {
          timeout: Math.ceil((this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000),
          ...(this.options.fetch ? { [oidc.customFetch]: this.options.fetch } : {}),
          execute: [
            oidc.enableNonRepudiationChecks,
            ...(this.issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : []),
          ],
        }),
      )
      .catch((error: unknown) => {
        this.configuration = null;
        throw new UnavailableError(
          'provider_unavailable',
          `the OpenID Connect discovery of ${this.issuer.href} failed`,
          { cause: error },
        );
      });
    return this.configuration;
  }

  private translate(error: unknown, oidc: typeof Oidc): Error {
    const name = this.displayName;
    if (error instanceof UnauthorizedError || error instanceof UnavailableError) return error;
    if (error instanceof oidc.AuthorizationResponseError) {
      return error.error === 'access_denied'
        ? new UnauthorizedError('access_denied', `the sign-in was cancelled at ${name}`, { cause: error })
        : new UnauthorizedError('provider_error', `${name} refused the sign-in (${error.error})`, { cause: error });
    }
    if (error instanceof oidc.ResponseBodyError) {
      return new UnauthorizedError('provider_error', `${name} refused the authorization code (${error.error})`, {
        cause: error,
      });
    }
    if (error instanceof oidc.ClientError) {
      const detail = error.cause instanceof Error ? error.cause.message : error.message;
      if (/"iss" \(issuer\) response parameter/.test(detail)) {
        return new UnauthorizedError('provider_mismatch', `the answer did not come from ${name}`, { cause: error });
      }
      if (/JWT|JWS|ID Token|"nonce"|"aud"|"iss"|"exp"/i.test(`${error.code} ${detail}`)) {
        return new UnauthorizedError('invalid_id_token', `the ID token from ${name} failed its checks (${detail})`, {
          cause: error,
        });
      }
      return new UnavailableError('provider_unavailable', `${name} answered unexpectedly (${detail})`, {
        cause: error,
      });
    }
    return new UnavailableError('provider_unavailable', `${name} cannot be reached`, { cause: error });
  }
}
