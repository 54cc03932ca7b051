import {
  type AuthorizationRequest,
  type AuthorizationResponse,
  UnauthorizedError,
  UnavailableError,
} from '@trellis/core';
import type { ProviderHttp } from '../providerHttp.js';
import { pkceChallenge } from './pkce.js';

export interface AuthorizationCodeFlowOptions {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** The provider's issuer identifier, compared with an RFC 9207 `iss` callback parameter. */
  issuer: string;
  scopes: readonly string[];
  /** Sends the PKCE S256 challenge and verifier. */
  pkce: boolean;
  /** `basic`: HTTP Basic client authentication; `post`: id and secret in the form. */
  clientAuthentication: 'basic' | 'post';
  /** How the token response lists granted scopes (GitHub: commas). */
  scopeSeparator?: RegExp;
}

export interface GrantedToken {
  accessToken: string;
  refreshToken: string | null;
  expiresInSeconds: number | null;
  scopes: string[];
}

/** OAuth 2.0 authorization code grant (RFC 6749 §4.1) against a plain OAuth provider. */
export class AuthorizationCodeFlow {
  constructor(
    private readonly http: ProviderHttp,
    private readonly options: AuthorizationCodeFlowOptions,
  ) {}

  authorizationUrl(request: AuthorizationRequest): string {
    const url = new URL(this.options.authorizeUrl);
    url.searchParams.set('client_id', this.options.clientId);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('redirect_uri', request.redirectUri);
    url.searchParams.set('state', request.state);
    if (this.options.scopes.length > 0) url.searchParams.set('scope', this.options.scopes.join(' '));
    if (this.options.pkce) {
      url.searchParams.set('code_challenge', pkceChallenge(request.codeVerifier));
      url.searchParams.set('code_challenge_method', 'S256');
    }
    return url.href;
  }

  /** RFC 6749 §6; a refused refresh token is `provider_token_expired` (sign in again). */
  async refresh(refreshToken: string): Promise<GrantedToken> {
    const { status, body } = await this.http.postForm(
      this.options.tokenUrl,
      { grant_type: 'refresh_token', refresh_token: refreshToken, ...this.clientForm() },
      this.clientHeaders(),
    );
    if (typeof body.error === 'string' || status >= 400) {
      const error = typeof body.error === 'string' ? body.error.slice(0, 100) : `HTTP ${status}`;
      throw new UnauthorizedError(
        'provider_token_expired',
        `${this.http.providerName} refused the refresh token (${error})`,
      );
    }
    return this.granted(body);
  }

  async exchange(response: AuthorizationResponse): Promise<GrantedToken> {
    const name = this.http.providerName;
    const iss = response.parameters.iss;
    if (iss !== undefined && iss !== this.options.issuer) {
      throw new UnauthorizedError('provider_mismatch', `the answer came from ${iss.slice(0, 200)}, not from ${name}`);
    }
    const code = response.parameters.code;
    if (!code) throw new UnauthorizedError('provider_error', `${name} sent no authorization code`);
    const form: Record<string, string> = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: response.redirectUri,
    };
    if (this.options.pkce) form.code_verifier = response.codeVerifier;
    const { status, body } = await this.http.postForm(
      this.options.tokenUrl,
      { ...form, ...this.clientForm() },
      this.clientHeaders(),
    );
    // GitHub answers errors with 200 and an `error` field; others with 400/401.
    if (typeof body.error === 'string' || status >= 400) {
      const error = typeof body.error === 'string' ? body.error.slice(0, 100) : `HTTP ${status}`;
      throw new UnauthorizedError('provider_error', `${name} refused the authorization code (${error})`);
    }
    return this.granted(body);
  }

  private granted(body: Record<string, unknown>): GrantedToken {
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      throw new UnavailableError(
        'provider_unavailable',
        `${this.http.providerName} answered the token request without an access token`,
      );
    }
    const scopes = typeof body.scope === 'string' ? body.scope : typeof body.scopes === 'string' ? body.scopes : '';
    const expiresIn = Number(body.expires_in);
    return {
      accessToken: body.access_token,
      refreshToken: typeof body.refresh_token === 'string' && body.refresh_token !== '' ? body.refresh_token : null,
      expiresInSeconds: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : null,
      scopes: scopes.split(this.options.scopeSeparator ?? /[\s,]+/).filter(Boolean),
    };
  }

  /** `post`: the client id and secret in the form (`basic` sends them as a header instead). */
  private clientForm(): Record<string, string> {
    return this.options.clientAuthentication === 'post'
      ? { client_id: this.options.clientId, client_secret: this.options.clientSecret }
      : {};
  }

  private clientHeaders(): Record<string, string> {
    if (this.options.clientAuthentication !== 'basic') return {};
    const credentials = `${encodeURIComponent(this.options.clientId)}:${encodeURIComponent(this.options.clientSecret)}`;
    return { Authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
  }
}
