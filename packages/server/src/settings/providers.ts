/** The sign-in and git providers an OAuth application may be configured for (`TRELLIS_<PROVIDER>_…`). */
export const PROVIDERS = ['GITHUB', 'GITLAB', 'BITBUCKET', 'GOOGLE'] as const;
export type ProviderName = (typeof PROVIDERS)[number];
