/** A repository at a git provider, in the shape of `GET /api/cli/repositories/{provider}`. */
export interface GitRepository {
  /** `owner/name` (GitLab: the full namespace path). */
  full_name: string;
  name: string;
  /** The owning user, organisation, group or workspace. */
  owner: string;
  private: boolean;
  default_branch: string | null;
  /** HTTPS clone URL, without credentials. */
  clone_url: string;
  html_url: string;
  updated_at: string | null;
}

/** A renewed access token (OAuth 2.0 refresh token grant). */
export interface RefreshedToken {
  accessToken: string;
  /** The provider may rotate the refresh token; null: keep using the old one. */
  refreshToken: string | null;
  expiresInSeconds: number | null;
}

/**
 * Lists the repositories an access token can see at one git provider, following every page up
 * to `limit`, and renews expired access tokens. Adapters translate failures into domain errors:
 * `UnauthorizedError('provider_token_expired')` when the provider refuses the token (401) or the
 * refresh token, `RateLimitedError` when it rate limits, `UnavailableError('provider_unavailable')`
 * otherwise.
 */
export interface RepositoryLister {
  listRepositories(accessToken: string, options: { limit: number }): Promise<GitRepository[]>;
  refreshAccessToken(refreshToken: string): Promise<RefreshedToken>;
}
