export { BitbucketProvider } from './bitbucket/BitbucketProvider.js';
export { GITHUB_SCOPES, GitHubProvider, nextLink } from './github/GitHubProvider.js';
export { GITLAB_SCOPES, GitLabProvider } from './gitlab/GitLabProvider.js';
export { GOOGLE_ISSUER, OIDC_SCOPES, OidcSignInProvider, type OidcProviderOptions } from './oidc/OidcSignInProvider.js';
export { pkceChallenge } from './oauth2/pkce.js';
export type { ProviderOptions } from './providerHttp.js';
export { NodeWebhookSender } from './webhooks/NodeWebhookSender.js';
