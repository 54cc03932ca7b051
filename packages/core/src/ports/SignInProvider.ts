import type { IdentityProvider } from '../domain/enums.js';

/** What the browser is sent to the provider with (OAuth 2.0 authorization code flow). */
export interface AuthorizationRequest {
  /** The control plane's callback, registered with the provider. */
  redirectUri: string;
  state: string;
  /** PKCE (RFC 7636) verifier; a provider that supports PKCE is sent its S256 challenge. */
  codeVerifier: string;
  /** OpenID Connect `nonce`; plain OAuth 2.0 providers ignore it. */
  nonce: string;
}

/** The provider's answer at the callback, with the values the request was made with. */
export interface AuthorizationResponse extends AuthorizationRequest {
  /** Every query parameter of the callback as received (`code`, `state`, `iss`, ...). */
  parameters: Readonly<Record<string, string>>;
}

/** The account at the provider, as its API describes it. */
export interface ProviderProfile {
  /** Stable id of the account at the provider (never the email, which can change). */
  providerUserId: string;
  /** The primary email, or null when the provider has none to give. */
  email: string | null;
  /** Whether the provider says the person proved they own `email`. */
  emailVerified: boolean;
  name: string | null;
  /** OAuth access token for the provider's API; kept encrypted. */
  accessToken: string;
  /** Kept encrypted too, to renew an access token that expires (GitLab, Bitbucket). */
  refreshToken: string | null;
  /** Lifetime of `accessToken` as the provider states it; null when it does not expire. */
  expiresInSeconds: number | null;
  scopes: string[];
}

/**
 * Sign-in at one OAuth 2.0 / OpenID Connect provider. Adapters translate every provider failure
 * into a domain error: `UnauthorizedError('provider_error')` when the provider refuses the code or
 * answers with an error, `UnauthorizedError('provider_mismatch')` when the answer comes from
 * another issuer, `UnauthorizedError('invalid_id_token')` when an ID token fails its checks, and
 * `UnavailableError('provider_unavailable')` when it cannot be reached or answers nonsense.
 */
export interface SignInProvider {
  readonly id: IdentityProvider;
  /** How the provider is named on the sign-in page, e.g. `GitHub`, `Okta`. */
  readonly displayName: string;
  /** The URL of the provider's consent page to send the browser to. */
  authorizationUrl(request: AuthorizationRequest): Promise<string>;
  /** Trades the authorization code for a token and reads the account it belongs to. */
  exchangeCode(response: AuthorizationResponse): Promise<ProviderProfile>;
}
