import {
  type ConfiguredProvider,
  GIT_PROVIDERS,
  type GitProvider,
  IDENTITY_PROVIDERS,
  type IdentityProvider,
  type ProviderPorts,
  type VcsPort,
  type VcsPorts,
} from '@trellis/core';
import {
  BitbucketProvider,
  BitbucketVcsApi,
  BitbucketWebhookReader,
  GitHubProvider,
  GitHubVcsApi,
  GitHubWebhookReader,
  GitLabProvider,
  GitLabVcsApi,
  GitLabWebhookReader,
  OidcSignInProvider,
} from '@trellis/providers';
import type { OAuthAppConfig, ServerConfig } from './config.js';

type ProviderAdapter = GitHubProvider | GitLabProvider | BitbucketProvider | OidcSignInProvider;

/** DESIGN §1: one adapter per provider, chosen by name through an explicit map. */
const ADAPTERS: Record<IdentityProvider, (app: OAuthAppConfig) => ProviderAdapter> = {
  github: (app) => new GitHubProvider(options(app)),
  gitlab: (app) => new GitLabProvider(options(app)),
  bitbucket: (app) => new BitbucketProvider(options(app)),
  // Any OpenID Connect issuer: TRELLIS_GOOGLE_BASE_URL is the issuer (Google's by default).
  google: (app) => new OidcSignInProvider(options(app)),
};

function options(app: OAuthAppConfig) {
  return {
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    baseUrl: app.baseUrl,
    ...(app.displayName ? { displayName: app.displayName } : {}),
  };
}

/** The sign-in providers and git hosts of the configuration (`TRELLIS_<PROVIDER>_CLIENT_ID`, ...). */
export function buildProviders(config: Pick<ServerConfig, 'providers'>): ProviderPorts {
  const ports: ProviderPorts = { signIn: {}, repositories: {} };
  for (const id of IDENTITY_PROVIDERS) {
    const app = config.providers[id.toUpperCase() as Uppercase<IdentityProvider>];
    if (!app) continue;
    const adapter = ADAPTERS[id](app);
    ports.signIn[id] = adapter;
    if (id !== 'google') ports.repositories[id] = adapter as GitHubProvider | GitLabProvider | BitbucketProvider;
  }
  return ports;
}

/** The sign-in buttons of a configuration: `{ id, name }` per configured provider, in page order. */
export function configuredProviders(config: Pick<ServerConfig, 'providers'>): ConfiguredProvider[] {
  const { signIn } = buildProviders(config);
  return IDENTITY_PROVIDERS.flatMap((id) => {
    const adapter = signIn[id];
    return adapter ? [{ id, name: adapter.displayName }] : [];
  });
}

/** The web address repositories are cloned from: the configured base URL, else the public service. */
const WEB_BASES: Record<GitProvider, string> = {
  github: 'https://github.com',
  gitlab: 'https://gitlab.com',
  bitbucket: 'https://bitbucket.org',
};

const VCS_ADAPTERS: Record<GitProvider, (app: OAuthAppConfig) => Omit<VcsPort, 'cloneUrl'>> = {
  github: (app) => ({ api: new GitHubVcsApi(vcsOptions(app)), webhooks: new GitHubWebhookReader() }),
  gitlab: (app) => ({ api: new GitLabVcsApi(vcsOptions(app)), webhooks: new GitLabWebhookReader() }),
  bitbucket: (app) => ({ api: new BitbucketVcsApi(vcsOptions(app)), webhooks: new BitbucketWebhookReader() }),
};

function vcsOptions(app: OAuthAppConfig) {
  return {
    baseUrl: app.baseUrl,
    ...(app.apiUrl ? { apiUrl: app.apiUrl } : {}),
    ...(app.displayName ? { displayName: app.displayName } : {}),
  };
}

/**
 * Git-driven runs (issue 13): the API and webhook reader of every configured git provider, at the
 * same base URL as its sign-in (`TRELLIS_<PROVIDER>_BASE_URL`: GitHub Enterprise Server,
 * self-managed GitLab; the API address is derived from it as for sign-in, unless
 * `TRELLIS_<PROVIDER>_API_URL` names it). Clone URLs are `<base URL>/<repository>.git`.
 */
export function buildVcs(config: Pick<ServerConfig, 'providers'>): VcsPorts {
  const ports: VcsPorts = {};
  for (const id of GIT_PROVIDERS) {
    const app = config.providers[id.toUpperCase() as Uppercase<GitProvider>];
    if (!app) continue;
    const web = (app.baseUrl ?? WEB_BASES[id]).replace(/\/+$/, '');
    ports[id] = { ...VCS_ADAPTERS[id](app), cloneUrl: (repository) => `${web}/${repository}.git` };
  }
  return ports;
}
