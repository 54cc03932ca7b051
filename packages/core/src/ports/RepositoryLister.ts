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

/**
 * Lists the repositories an access token can see at one git provider, following every page up
 * to `limit`. Adapters translate failures into domain errors:
 * `UnauthorizedError('provider_token_expired')` when the provider refuses the token (401),
 * `RateLimitedError` when it rate limits, `UnavailableError('provider_unavailable')` otherwise.
 */
export interface RepositoryLister {
  listRepositories(accessToken: string, options: { limit: number }): Promise<GitRepository[]>;
}
