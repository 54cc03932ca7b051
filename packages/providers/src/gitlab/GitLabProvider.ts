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
import { baseUrlOf, collectPages, isoTime, ProviderHttp, type ProviderOptions } from '../providerHttp.js';

export const GITLAB_SCOPES = ['read_user', 'read_api'] as const;

interface GitLabUser {
  id: number;
  username: string;
  name: string | null;
  email?: string | null;
  /** Present for the authenticated user; null while the primary email is unconfirmed. */
  confirmed_at?: string | null;
}

interface GitLabEmail {
  email: string;
  confirmed_at: string | null;
}

interface GitLabProject {
  path: string;
  path_with_namespace: string;
  namespace?: { full_path?: string };
  visibility?: 'private' | 'internal' | 'public';
  default_branch?: string | null;
  http_url_to_repo: string;
  web_url: string;
  last_activity_at?: string | null;
}

/**
 * GitLab.com and self-managed GitLab: OAuth application sign-in with PKCE and the projects the
 * user is a member of. OAuth is at `<base>/oauth/*`, the REST API at `<base>/api/v4`.
 */
export class GitLabProvider implements SignInProvider, RepositoryLister {
  readonly id = 'gitlab' as const;
  readonly displayName: string;
  readonly apiBase: string;
  private readonly http: ProviderHttp;
  private readonly flow: AuthorizationCodeFlow;

  constructor(options: ProviderOptions & { displayName?: string }) {
    const web = baseUrlOf(options.baseUrl || 'https://gitlab.com');
    this.apiBase = `${web}/api/v4`;
    this.displayName = options.displayName ?? 'GitLab';
    this.http = new ProviderHttp(this.displayName, options);
    this.flow = new AuthorizationCodeFlow(this.http, {
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      authorizeUrl: `${web}/oauth/authorize`,
      tokenUrl: `${web}/oauth/token`,
      issuer: web,
      scopes: GITLAB_SCOPES,
      pkce: true,
      clientAuthentication: 'post',
    });
  }

  async authorizationUrl(request: AuthorizationRequest): Promise<string> {
    return this.flow.authorizationUrl(request);
  }

  async exchangeCode(response: AuthorizationResponse): Promise<ProviderProfile> {
    const { accessToken, refreshToken, expiresInSeconds, scopes } = await this.flow.exchange(response);
    const user = (await this.http.getJson<GitLabUser>(`${this.apiBase}/user`, accessToken)).body;
    if (!user || typeof user.id !== 'number') {
      throw new UnavailableError('provider_unavailable', `${this.displayName} answered /user without an id`);
    }
    const email = user.email || null;
    let emailVerified = false;
    if (email && user.confirmed_at !== undefined) {
      emailVerified = user.confirmed_at !== null;
    } else if (email) {
      // Older installations leave `confirmed_at` out of /user; the confirmed addresses say it.
      const emails = (
        await this.http.getJson<GitLabEmail[]>(`${this.apiBase}/user/emails`, accessToken, {}, { optional: true })
      ).body;
      emailVerified =
        Array.isArray(emails) &&
        emails.some((entry) => entry.email.toLowerCase() === email.toLowerCase() && entry.confirmed_at !== null);
    }
    return {
      providerUserId: String(user.id),
      email,
      emailVerified,
      name: user.name || user.username || null,
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
    const first = new URL(`${this.apiBase}/projects`);
    first.search = new URLSearchParams({
      membership: 'true',
      per_page: '100',
      order_by: 'last_activity_at',
      sort: 'desc',
    }).toString();
    return collectPages(first.href, options.limit, async (url) => {
      const { body, headers } = await this.http.getJson<GitLabProject[]>(url, accessToken);
      if (!Array.isArray(body)) {
        throw new UnavailableError('provider_unavailable', `${this.displayName} answered /projects with a non-list`);
      }
      const nextPage = headers.get('x-next-page');
      let next: string | null = null;
      if (nextPage && /^\d+$/.test(nextPage)) {
        const nextUrl = new URL(url);
        nextUrl.searchParams.set('page', nextPage);
        next = nextUrl.href;
      }
      return { items: body.map(toRepository), next };
    });
  }
}

function toRepository(project: GitLabProject): GitRepository {
  const fullPath = project.path_with_namespace;
  return {
    full_name: fullPath,
    name: project.path,
    owner: project.namespace?.full_path ?? fullPath.slice(0, Math.max(0, fullPath.lastIndexOf('/'))),
    // `internal` projects are visible to every signed-in user of the instance, not to the world.
    private: project.visibility !== 'public',
    default_branch: project.default_branch ?? null,
    clone_url: project.http_url_to_repo,
    html_url: project.web_url,
    updated_at: isoTime(project.last_activity_at),
  };
}
