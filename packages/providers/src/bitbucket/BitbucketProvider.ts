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

interface BitbucketUser {
  uuid: string;
  username?: string;
  display_name?: string | null;
}

interface BitbucketPage<T> {
  values: T[];
  next?: string;
}

interface BitbucketEmail {
  email: string;
  is_primary: boolean;
  is_confirmed: boolean;
}

interface BitbucketRepository {
  slug: string;
  full_name: string;
  is_private: boolean;
  workspace?: { slug: string };
  mainbranch?: { name: string } | null;
  links: { html: { href: string }; clone?: { name: string; href: string }[] };
  updated_on?: string | null;
}

/** `https://jane@bitbucket.org/acme/api.git` → `https://bitbucket.org/acme/api.git`. */
function withoutCredentials(href: string): string {
  const url = new URL(href);
  url.username = '';
  url.password = '';
  return url.href;
}

/**
 * Bitbucket Cloud: OAuth consumer sign-in (no PKCE; the scopes `account email repository` are set
 * on the consumer) and the repositories of the workspaces the user is a member of. With a base URL
 * (test servers) OAuth is at `<base>/site/oauth2/*` and the API at `<base>/api/2.0`.
 */
export class BitbucketProvider implements SignInProvider, RepositoryLister {
  readonly id = 'bitbucket' as const;
  readonly displayName: string;
  readonly apiBase: string;
  private readonly http: ProviderHttp;
  private readonly flow: AuthorizationCodeFlow;

  constructor(options: ProviderOptions & { displayName?: string }) {
    const web = options.baseUrl ? baseUrlOf(options.baseUrl) : 'https://bitbucket.org';
    this.apiBase = options.baseUrl ? `${web}/api/2.0` : 'https://api.bitbucket.org/2.0';
    this.displayName = options.displayName ?? 'Bitbucket';
    this.http = new ProviderHttp(this.displayName, options);
    this.flow = new AuthorizationCodeFlow(this.http, {
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      authorizeUrl: `${web}/site/oauth2/authorize`,
      tokenUrl: `${web}/site/oauth2/access_token`,
      issuer: web,
      scopes: [],
      pkce: false,
      clientAuthentication: 'basic',
    });
  }

  async authorizationUrl(request: AuthorizationRequest): Promise<string> {
    return this.flow.authorizationUrl(request);
  }

  async exchangeCode(response: AuthorizationResponse): Promise<ProviderProfile> {
    const { accessToken, refreshToken, expiresInSeconds, scopes } = await this.flow.exchange(response);
    const user = (await this.http.getJson<BitbucketUser>(`${this.apiBase}/user`, accessToken)).body;
    if (!user || typeof user.uuid !== 'string' || user.uuid === '') {
      throw new UnavailableError('provider_unavailable', `${this.displayName} answered /user without a uuid`);
    }
    const emails = await collectPages(`${this.apiBase}/user/emails`, 100, async (url) => {
      const { body } = await this.http.getJson<BitbucketPage<BitbucketEmail>>(url, accessToken, {}, { optional: true });
      return { items: body?.values ?? [], next: sameOriginNext(body?.next, this.apiBase) };
    });
    const primary = emails.find((entry) => entry.is_primary);
    return {
      providerUserId: user.uuid,
      email: primary?.email ?? null,
      emailVerified: primary?.is_confirmed === true,
      name: user.display_name || user.username || null,
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
    const first = `${this.apiBase}/repositories?role=member&pagelen=100&sort=-updated_on`;
    return collectPages(first, options.limit, async (url) => {
      const { body } = await this.http.getJson<BitbucketPage<BitbucketRepository>>(url, accessToken);
      if (!body || !Array.isArray(body.values)) {
        throw new UnavailableError('provider_unavailable', `${this.displayName} answered /repositories without values`);
      }
      return { items: body.values.map(toRepository), next: sameOriginNext(body.next, this.apiBase) };
    });
  }
}

function toRepository(repo: BitbucketRepository): GitRepository {
  const [workspace = '', slug = repo.slug] = repo.full_name.split('/');
  const https = repo.links.clone?.find((link) => link.name === 'https');
  return {
    full_name: repo.full_name,
    name: slug,
    owner: repo.workspace?.slug ?? workspace,
    private: repo.is_private === true,
    default_branch: repo.mainbranch?.name ?? null,
    clone_url: https ? withoutCredentials(https.href) : `${repo.links.html.href}.git`,
    html_url: repo.links.html.href,
    updated_at: isoTime(repo.updated_on),
  };
}
