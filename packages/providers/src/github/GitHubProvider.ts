import type {
  AuthorizationRequest,
  AuthorizationResponse,
  GitRepository,
  ProviderProfile,
  RefreshedToken,
  RepositoryLister,
  SignInProvider,
} from '@trellis/core';
import { UnavailableError } from '@trellis/core';
import { AuthorizationCodeFlow } from '../oauth2/AuthorizationCodeFlow.js';
import {
  baseUrlOf,
  collectPages,
  isoTime,
  ProviderHttp,
  type ProviderOptions,
  sameOriginNext,
} from '../providerHttp.js';

export const GITHUB_SCOPES = ['read:user', 'user:email', 'repo'] as const;

interface GitHubUser {
  id: number;
  login: string;
  name: string | null;
}

interface GitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

interface GitHubRepository {
  name: string;
  full_name: string;
  owner: { login: string };
  private: boolean;
  default_branch?: string | null;
  clone_url: string;
  html_url: string;
  updated_at?: string | null;
}

/** `<https://api.github.com/user/repos?page=2>; rel="next", <…>; rel="last"` → the next URL. */
export function nextLink(header: string | null): string | null {
  for (const part of (header ?? '').split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (match?.[1]) return match[1];
  }
  return null;
}

/**
 * GitHub and GitHub Enterprise Server: OAuth app sign-in (with PKCE) and the repositories of the
 * user. With a base URL (GHES, test servers) OAuth is at `<base>/login/oauth/*` and the REST API
 * at `<base>/api/v3`; without, at github.com and api.github.com.
 */
export class GitHubProvider implements SignInProvider, RepositoryLister {
  readonly id = 'github' as const;
  readonly displayName: string;
  private readonly http: ProviderHttp;
  private readonly flow: AuthorizationCodeFlow;
  readonly apiBase: string;

  constructor(options: ProviderOptions & { displayName?: string }) {
    const web = options.baseUrl ? baseUrlOf(options.baseUrl) : 'https://github.com';
    this.apiBase = options.baseUrl ? `${web}/api/v3` : 'https://api.github.com';
    this.displayName = options.displayName ?? (options.baseUrl ? 'GitHub Enterprise' : 'GitHub');
    this.http = new ProviderHttp(this.displayName, options);
    this.flow = new AuthorizationCodeFlow(this.http, {
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      authorizeUrl: `${web}/login/oauth/authorize`,
      tokenUrl: `${web}/login/oauth/access_token`,
      issuer: web,
      scopes: GITHUB_SCOPES,
      pkce: true,
      clientAuthentication: 'post',
    });
  }

  async authorizationUrl(request: AuthorizationRequest): Promise<string> {
    return this.flow.authorizationUrl(request);
  }

  async exchangeCode(response: AuthorizationResponse): Promise<ProviderProfile> {
    const { accessToken, refreshToken, expiresInSeconds, scopes } = await this.flow.exchange(response);
    const user = (await this.get<GitHubUser>('/user', accessToken)).body;
    if (!user || (typeof user.id !== 'number' && typeof user.id !== 'string')) {
      throw new UnavailableError('provider_unavailable', `${this.displayName} answered /user without an id`);
    }
    const emails = (await this.get<GitHubEmail[]>('/user/emails', accessToken, { optional: true })).body;
    // Only the primary address, and only once GitHub has seen the person confirm it.
    const primary = Array.isArray(emails) ? emails.find((entry) => entry.primary) : undefined;
    return {
      providerUserId: String(user.id),
      email: primary?.email ?? null,
      emailVerified: primary?.verified === true,
      name: user.name || user.login || null,
      accessToken,
      refreshToken,
      expiresInSeconds,
      scopes,
    };
  }

  async refreshAccessToken(refreshToken: string): Promise<RefreshedToken> {
    const { accessToken, refreshToken: rotated, expiresInSeconds } = await this.flow.refresh(refreshToken);
    return { accessToken, refreshToken: rotated, expiresInSeconds };
  }

  async listRepositories(accessToken: string, options: { limit: number }): Promise<GitRepository[]> {
    const first = `${this.apiBase}/user/repos?per_page=100&sort=updated&affiliation=owner,collaborator,organization_member`;
    return collectPages(first, options.limit, async (url) => {
      const { body, headers } = await this.http.getJson<GitHubRepository[]>(url, accessToken, GITHUB_HEADERS);
      if (!Array.isArray(body)) {
        throw new UnavailableError('provider_unavailable', `${this.displayName} answered /user/repos with a non-list`);
      }
      return { items: body.map(toRepository), next: sameOriginNext(nextLink(headers.get('link')), this.apiBase) };
    });
  }

  private get<T>(path: string, token: string, options: { optional?: boolean } = {}) {
    return this.http.getJson<T>(`${this.apiBase}${path}`, token, GITHUB_HEADERS, options);
  }
}

const GITHUB_HEADERS = { Accept: 'application/vnd.github+json', 'X-GitHub-Api-Version': '2022-11-28' };

function toRepository(repo: GitHubRepository): GitRepository {
  return {
    full_name: repo.full_name,
    name: repo.name,
    owner: repo.owner?.login ?? repo.full_name.split('/')[0] ?? '',
    private: repo.private === true,
    default_branch: repo.default_branch ?? null,
    clone_url: repo.clone_url,
    html_url: repo.html_url,
    updated_at: isoTime(repo.updated_at),
  };
}
