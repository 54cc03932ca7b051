import {
  type AuthorizationRequest,
  type AuthorizationResponse,
  type GitRepository,
  type IdentityProvider,
  PROVIDER_NAMES,
  type ProviderProfile,
  type RefreshedToken,
  type RepositoryLister,
  type SignInProvider,
  UnauthorizedError,
} from '@trellis/core';

/**
 * A sign-in provider that answers from memory: `accounts` maps an authorization code to the
 * account it signs in. Every exchange is recorded for assertions.
 */
export class FakeSignInProvider implements SignInProvider {
  readonly displayName: string;
  readonly accounts = new Map<string, ProviderProfile>();
  readonly exchanges: AuthorizationResponse[] = [];

  constructor(readonly id: IdentityProvider) {
    this.displayName = PROVIDER_NAMES[id];
  }

  /** Makes `code` sign in `profile` (with a default token, name and scopes). */
  account(code: string, profile: Partial<ProviderProfile> & { email: string | null }): this {
    this.accounts.set(code, {
      providerUserId: `${this.id}-${code}`,
      emailVerified: true,
      name: null,
      accessToken: `${this.id}-token-${code}`,
      refreshToken: null,
      expiresInSeconds: null,
      scopes: ['read'],
      ...profile,
    });
    return this;
  }

  async authorizationUrl(request: AuthorizationRequest): Promise<string> {
    const url = new URL(`https://${this.id}.example.test/authorize`);
    url.search = new URLSearchParams({ redirect_uri: request.redirectUri, state: request.state }).toString();
    return url.href;
  }

  async exchangeCode(response: AuthorizationResponse): Promise<ProviderProfile> {
    this.exchanges.push(response);
    const profile = this.accounts.get(response.parameters.code ?? '');
    if (!profile) throw new UnauthorizedError('provider_error', `${this.displayName} refused the authorization code`);
    return { ...profile };
  }
}

/**
 * A git host whose repositories are kept per access token, and renewed tokens per refresh token;
 * an unknown token is refused like a revoked one.
 */
export class FakeRepositoryLister implements RepositoryLister {
  readonly repositories = new Map<string, GitRepository[]>();
  readonly refreshes = new Map<string, RefreshedToken>();
  readonly calls: { accessToken: string; limit: number }[] = [];
  readonly refreshCalls: string[] = [];

  async refreshAccessToken(refreshToken: string): Promise<RefreshedToken> {
    this.refreshCalls.push(refreshToken);
    const renewed = this.refreshes.get(refreshToken);
    if (!renewed) throw new UnauthorizedError('provider_token_expired', 'the refresh token was refused');
    return { ...renewed };
  }

  async listRepositories(accessToken: string, options: { limit: number }): Promise<GitRepository[]> {
    this.calls.push({ accessToken, limit: options.limit });
    const found = this.repositories.get(accessToken);
    if (!found) throw new UnauthorizedError('provider_token_expired', 'the token was refused');
    return found.slice(0, options.limit);
  }
}
